/**
 * Money without floating point: USD decimal strings at the API, bigint micro-USD inside (1 USD =
 * 1,000,000 micro; one raw USDC unit = one micro-USD), raw token integers on the wire.
 *
 * Defends: every ambiguous spelling is refused rather than guessed — signs, exponents, leading zeros,
 * bare dots, separators, non-ASCII digits, JS numbers, more than 6 decimals, absurd magnitudes.
 * Does not defend: currencies other than USD-pegged 6-decimal tokens (USDC only, by design).
 */
export const MICRO_PER_USD = 1_000_000n;
/** Largest USD amount any field may carry: 10^15 USD. */
export const MAX_USD_MICRO = 10n ** 15n * MICRO_PER_USD;
const USD_RE = /^(0|[1-9][0-9]{0,15})(\.[0-9]{1,6})?$/;
const RAW_RE = /^(0|[1-9][0-9]{0,77})$/;

export function isUsdString(value: unknown): value is string {
  return typeof value === 'string' && USD_RE.test(value) && parseUsdUnchecked(value) <= MAX_USD_MICRO;
}

function parseUsdUnchecked(value: string): bigint {
  const [whole, fraction = ''] = value.split('.') as [string, string?];
  return BigInt(whole) * MICRO_PER_USD + BigInt(fraction.padEnd(6, '0'));
}

/** Parses a canonical USD decimal string into micro-USD; throws RangeError naming the value otherwise. */
export function parseUsd(value: string): bigint {
  if (!isUsdString(value)) throw new RangeError(`not a USD amount: ${JSON.stringify(value).slice(0, 40)}`);
  return parseUsdUnchecked(value);
}

/** Formats micro-USD as the shortest decimal string: 1500000n → "1.5", 1n → "0.000001". */
export function formatUsd(micro: bigint): string {
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / MICRO_PER_USD;
  const fraction = (abs % MICRO_PER_USD).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export function isRawAmount(value: unknown): value is string {
  return typeof value === 'string' && RAW_RE.test(value) && BigInt(value) < 2n ** 256n;
}

/** Parses a raw token amount: base-10 integer string, no sign, spaces or leading zeros, below 2^256. */
export function parseRawAmount(value: string): bigint {
  if (!isRawAmount(value)) throw new RangeError(`not a raw token amount: ${JSON.stringify(value).slice(0, 40)}`);
  return BigInt(value);
}

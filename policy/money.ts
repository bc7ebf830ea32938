/**
 * Money without floating point: USD decimal strings at the API, bigint micro-USD inside (1 USD =
 * 1,000,000 micro; one raw USDC unit = one micro-USD), raw token integers on the wire.
 *
 * Protects against: every ambiguous spelling being guessed at. Refused: signs, exponents, leading zeros,
 * bare or trailing dots, separators and spaces, non-ASCII digits, JS numbers (only strings parse), currency
 * symbols, more than 6 decimals, and magnitudes above 2^63 − 1 micro-USD (≈ 9.2 × 10^12 USD): every amount this
 * module parses fits the bigint columns that hold micro-USD (amount_micro, price_micro, cap_micro, spent_micro).
 * Route schemas bound what they accept much lower (src/api/http/schemas/common-schemas.ts), so that totals of
 * many such amounts fit those columns too.
 * Known limits: USD-pegged 6-decimal tokens only (USDC, by design); "1.50" is accepted and means 1.5 —
 * `formatUsd` gives the canonical spelling; `formatUsd` also formats negative values (for differences),
 * which `parseUsd` then refuses.
 */
export const MICRO_PER_USD = 1_000_000n;
/** Largest USD amount any field may carry, in micro-USD: the largest value of a PostgreSQL bigint (2^63 − 1). */
export const MAX_USD_MICRO = 2n ** 63n - 1n;
/** Raw token amounts are uint256: strictly below this. */
export const RAW_AMOUNT_LIMIT = 2n ** 256n;

/** At most 16 integer digits (the bound is then checked exactly) and 1–6 decimals; ASCII digits only. */
const USD_RE = /^(0|[1-9][0-9]{0,15})(\.[0-9]{1,6})?$/;
/** At most 78 digits (2^256 has 78), no sign, no leading zero; the bound is then checked exactly. */
const RAW_RE = /^(0|[1-9][0-9]{0,77})$/;

function quote(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value).slice(0, 40) : typeof value;
}

function parseUsdUnchecked(value: string): bigint {
  const dot = value.indexOf('.');
  const whole = dot === -1 ? value : value.slice(0, dot);
  const fraction = dot === -1 ? '' : value.slice(dot + 1);
  return BigInt(whole) * MICRO_PER_USD + BigInt(fraction.padEnd(6, '0'));
}

/** True for a USD decimal string this module parses: `^(0|[1-9][0-9]*)(\.[0-9]{1,6})?$`, at most MAX_USD_MICRO. */
export function isUsdString(value: unknown): value is string {
  return typeof value === 'string' && USD_RE.test(value) && parseUsdUnchecked(value) <= MAX_USD_MICRO;
}

/** Parses a USD decimal string into micro-USD; throws a RangeError naming the value otherwise. "0" parses. */
export function parseUsd(value: string): bigint {
  if (!isUsdString(value)) throw new RangeError(`not a USD amount: ${quote(value)}`);
  return parseUsdUnchecked(value);
}

/** Formats micro-USD as the shortest decimal string: 1500000n → "1.5", 1n → "0.000001", 10000000n → "10". */
export function formatUsd(micro: bigint): string {
  if (typeof micro !== 'bigint') throw new TypeError(`formatUsd expects a bigint, got ${typeof micro}`);
  const negative = micro < 0n;
  const abs = negative ? -micro : micro;
  const whole = abs / MICRO_PER_USD;
  const fraction = (abs % MICRO_PER_USD).toString().padStart(6, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** The canonical spelling of a USD string ("1.50" → "1.5", "0.000000" → "0"); throws like `parseUsd`. */
export function canonicalUsd(value: string): string {
  return formatUsd(parseUsd(value));
}

/** True for a raw token amount: base-10 integer string, no sign, spaces or leading zeros, below 2^256. */
export function isRawAmount(value: unknown): value is string {
  return typeof value === 'string' && RAW_RE.test(value) && BigInt(value) < RAW_AMOUNT_LIMIT;
}

/** Parses a raw token amount (see `isRawAmount`); throws a RangeError naming the value otherwise. */
export function parseRawAmount(value: string): bigint {
  if (!isRawAmount(value)) throw new RangeError(`not a raw token amount: ${quote(value)}`);
  return BigInt(value);
}

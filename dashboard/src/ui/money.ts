/** USD strings as the API writes them (up to 6 decimals) to and from micro-USD, and a sign-free display. */
export function toMicro(usd: string): bigint {
  const [whole = '0', frac = ''] = usd.split('.');
  return BigInt(whole) * 1_000_000n + BigInt((frac + '000000').slice(0, 6));
}

export function fromMicro(micro: bigint): string {
  const neg = micro < 0n;
  const abs = neg ? -micro : micro;
  const frac = (abs % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${abs / 1_000_000n}${frac ? `.${frac}` : ''}`;
}

export const usd = (v: string | null | undefined): string => (v == null ? '—' : `$${v}`);

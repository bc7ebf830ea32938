/**
 * How many bytes a JSON value takes once stored in a PostgreSQL `jsonb` column, read as its text form
 * (`octet_length(col::text)`, what the CHECK endpoints_discovery_bounded measures): `", "` between items and
 * members, `": "` after a key, strings escaped as JSON escapes them, and numbers as PostgreSQL's numeric writes
 * them — without an exponent, so the 6 characters of `1e+300` store as 301. Counted piece by piece, so a caller
 * walking a value can stop as soon as a budget is spent (./openapi-discovery.ts) instead of serialising first.
 * Pure.
 *
 * Defends: a byte budget undercounting what is stored (JSON.stringify's size is smaller: no spaces, exponents).
 * Does not defend: a string with a lone surrogate or a control character (the callers refuse those first; JSON
 * escapes them, jsonb may refuse or write them otherwise).
 */

/** The bytes `", "` or `": "` add between two items, or after a key. */
export const SEPARATOR_BYTES = 2;

/** The bytes of a string, escaped and quoted; at least `value.length + 2`, which callers may check first. */
export const stringBytes = (value: string): number => Buffer.byteLength(JSON.stringify(value));

/**
 * The bytes of a number as numeric writes it: JSON's spelling, an exponent written out in digits (`1e+21` is
 * 22 digits, `1.5e-7` is `0.00000015`); a number JSON cannot spell is `null`.
 */
export function numberBytes(value: number): number {
  const text = JSON.stringify(value);
  const e = text.indexOf('e');
  if (e < 0) return text.length;
  const sign = text.startsWith('-') ? 1 : 0;
  const digits = text.slice(sign, e).replace('.', '').length;
  const exponent = Number(text.slice(e + 1));
  if (exponent < 0) return sign + 2 + (-exponent - 1) + digits; // "0." then zeros then the digits
  const fraction = Math.max(0, digits - 1 - exponent);
  return sign + exponent + 1 + (fraction > 0 ? 1 + fraction : 0);
}

/** The bytes of a JSON scalar (string, number, boolean, null). */
export function scalarBytes(value: unknown): number {
  if (typeof value === 'string') return stringBytes(value);
  if (typeof value === 'number') return numberBytes(value);
  return value === false ? 5 : 4; // true, null
}

/** The bytes of a whole JSON value as jsonb text (keys counted once: jsonb keeps the last of duplicates). */
export function jsonbTextBytes(value: unknown): number {
  if (Array.isArray(value))
    return 2 + value.reduce((n: number, item, i) => n + (i > 0 ? SEPARATOR_BYTES : 0) + jsonbTextBytes(item), 0);
  if (typeof value === 'object' && value !== null)
    return (
      2 +
      Object.entries(value).reduce(
        (n: number, [key, item], i) =>
          n + (i > 0 ? SEPARATOR_BYTES : 0) + stringBytes(key) + SEPARATOR_BYTES + jsonbTextBytes(item),
        0,
      )
    );
  return scalarBytes(value);
}

/**
 * Hex that sorts by creation time: 12 hex digits of milliseconds since 1970, then CSPRNG output
 * (./random-hex.ts). Used for row identifiers (`auth_…`, `led_…`, `wal_…`) and our EIP-3009 nonces, so that
 * the indexes over them grow at their right edge. A random key lands on a random index page instead, and
 * after each checkpoint the first change to a page writes that whole 8 KB page to the WAL: with random
 * identifiers and nonces, most payments wrote one or more page images, and a table that outgrows memory
 * reads a random index page back from disk for each insert.
 *
 * Protects against: nothing more than the random part's width gives (48 bits in a 24-digit identifier,
 * 208 in a nonce: two values in one millisecond collide with probability 2^-48 and 2^-208; a collision is a
 * unique-key error, never a shared row). Known limits: the value shows when it was made, to the
 * millisecond; none of these values is a secret, and each row they name shows its time anyway.
 */
import { randomHex } from './random-hex.js';

const TIME_DIGITS = 12;

/** `digits` lower-case hex (> 12, even): the time `now` (ms) in the first 12, random bytes after. */
export function timeOrderedHex(digits: number, now: number = Date.now()): string {
  if (!Number.isInteger(digits) || digits <= TIME_DIGITS || digits % 2 !== 0)
    throw new RangeError(`timeOrderedHex: digits must be an even integer above ${TIME_DIGITS}, got ${digits}`);
  if (!Number.isSafeInteger(now) || now < 0 || now >= 16 ** TIME_DIGITS)
    throw new RangeError(`timeOrderedHex: now must be a millisecond time from 0 to 16^${TIME_DIGITS}, got ${now}`);
  return now.toString(16).padStart(TIME_DIGITS, '0') + randomHex((digits - TIME_DIGITS) / 2);
}

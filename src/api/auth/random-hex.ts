/**
 * Random hex for the random part of identifiers (`pd_…`, `auth_…`) and EIP-3009 nonces
 * (./time-ordered-hex.ts), taken from a 4 KiB buffer of node:crypto's CSPRNG output that is refilled when
 * used up — Node's own randomUUID() does the same. One randomBytes() call per value costs ≈ 5 µs (an
 * OpenSSL RAND round trip and a new Buffer); three of them ran on every payment.
 *
 * Protects against: nothing beyond what randomBytes gives — the bytes are the same CSPRNG's; each is
 * handed out once.
 * Known limits: not for secrets (bearer tokens, keys): the buffer holds values not yet handed out in
 * process memory; token-codec's generateToken draws its own bytes.
 */
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

/** `bytes` random bytes (1–256) as lower-case hex, 2 × bytes characters. */
export function randomHex(bytes: number): string {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 256)
    throw new RangeError(`randomHex: bytes must be an integer from 1 to 256, got ${bytes}`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

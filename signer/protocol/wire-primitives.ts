/**
 * The signer protocol's primitive wire values (./signer-protocol.ts is the contract): addresses, 32-byte hex,
 * unsigned 256-bit decimal strings and key references, each a strict, bounded zod schema.
 * Defends: oversize and malformed values before any handler reads them (no pattern is built at run time).
 */
import { z } from 'zod';

/** 0x-prefixed hex of a fixed byte length; one literal pattern per length (no pattern is built at run time). */
const HEX_OF_BYTES = {
  32: /^0x[0-9a-fA-F]{64}$/,
  65: /^0x[0-9a-fA-F]{130}$/,
} as const;
export const hex = (bytes: keyof typeof HEX_OF_BYTES) =>
  z.string().regex(HEX_OF_BYTES[bytes], `expected 0x-prefixed ${bytes}-byte hex`);

export const addressSchema = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 20-byte 0x address');
export const bytes32Schema = hex(32);
/** Unsigned base-10 integer below 2^256, no sign, spaces or leading zeros. */
// One refinement that tests the pattern before BigInt(): zod runs every check even after one failed, and
// BigInt() throws on strings such as "\u0000".
const UINT256_LIMIT = 1n << 256n;
export const uint256StringSchema = z
  .string()
  .refine(
    (v) => v.length <= 78 && /^(0|[1-9][0-9]*)$/.test(v) && BigInt(v) < UINT256_LIMIT,
    'expected an unsigned base-10 integer string below 2^256',
  );
/** Opaque key reference produced by the signer; the front stores it and hands it back. */
export const keyRefSchema = z
  .string()
  .min(8)
  .max(4096)
  .regex(/^[A-Za-z0-9:._\-]+$/, 'malformed key reference');

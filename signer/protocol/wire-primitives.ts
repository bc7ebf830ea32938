/**
 * The signer protocol's primitive wire values (./signer-protocol.ts is the contract): addresses, 32-byte hex,
 * unsigned 256-bit decimal strings, key references and free text (an EIP-712 domain's name and version, an owner's
 * sign-in message), each a strict, bounded zod schema.
 * Defends: oversize and malformed values before any handler reads them (no pattern is built at run time); free text
 * the API's own rule refuses (base/storable-text.ts: a NUL or other control character, a lone surrogate, a
 * bidirectional control, an invisible or line-separator character), refused here too whatever the front sent, so
 * the signer never hashes, signs over or keeps such text (`invalid_request`).
 */
import { z } from 'zod';
import { isStorableProse, isStorableText } from '../../base/storable-text.js';

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

/**
 * One line of free text of 1 to `max` UTF-16 code units (the length checked first), storable (base/storable-text.ts:
 * no control, bidirectional-control, invisible or line-separator character, no lone surrogate).
 */
export const wireText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max, { abort: true })
    .refine(
      isStorableText,
      'must be well-formed Unicode without control, bidirectional-control, invisible or line-separator characters',
    );

/** As wireText, for text that may span lines (a sign-in message): tab, line feed and carriage return allowed. */
export const wireProse = (max: number) =>
  z
    .string()
    .min(1)
    .max(max, { abort: true })
    .refine(
      isStorableProse,
      'must be well-formed Unicode without control characters other than line breaks and tabs, bidirectional-control, invisible or line-separator characters',
    );

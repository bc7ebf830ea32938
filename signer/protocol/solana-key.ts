/**
 * A Solana key's two spellings: its 32 bytes, and base58 as Solana writes an address (one '1' per leading zero
 * byte), through @scure/base — about 1.5 µs to spell a key and 0.5 µs to read a spelling back, against 7 and 18 µs
 * for @solana/kit's BigInt base conversion (docs/performance.md, "Solana messages read and written without BigInt
 * base58"); test/unit/signer/solana-message-codec.test.ts holds both spellings equal to kit's.
 *
 * Defends: two spellings naming one key — a spelling is a key's only when it is exactly what the key's bytes spell.
 */
import { base58 } from '@scure/base';
import type { Address } from '@solana/kit';

/** A key's 32 bytes from its base58 spelling; throws unless it spells exactly 32 bytes. */
export function keyBytes(spelling: string): Uint8Array {
  const bytes = base58.decode(spelling);
  if (bytes.length !== 32) throw new RangeError('a Solana key is 32 bytes');
  return bytes;
}

/** A 32-byte key as base58 (kit's `Address` spelling). */
export const keySpelling = (bytes: Uint8Array): Address => base58.encode(bytes) as Address;

/** Whether `spelling` is the base58 spelling of a 32-byte key (what kit's `isAddress` answers). */
export function isSolanaKey(spelling: string): boolean {
  try {
    return keySpelling(keyBytes(spelling)) === spelling;
  } catch {
    return false;
  }
}

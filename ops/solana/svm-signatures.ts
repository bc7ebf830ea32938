/**
 * Checks every signature of a wire transaction (Ed25519 over the message bytes, by each signer's address),
 * as a validator's signature-verification stage does before anything else looks at the transaction.
 * Defends against: a transaction with a missing or wrong signature reaching the status cache or the
 * runtime (a tampered copy of a landed transaction is a signature failure, not "already processed").
 * Does not: check anything but signatures.
 */
import { createPublicKey, verify } from 'node:crypto';
import { address, getAddressEncoder, type Transaction } from '@solana/kit';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (OID 1.3.101.112) before the 32-byte key. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function allSignaturesValid(tx: Transaction): boolean {
  const entries = Object.entries(tx.signatures);
  if (entries.length === 0) return false;
  const message = Uint8Array.from(tx.messageBytes);
  return entries.every(([signer, signature]) => {
    if (!signature) return false;
    const spki = Buffer.concat([ED25519_SPKI_PREFIX, Uint8Array.from(getAddressEncoder().encode(address(signer)))]);
    const key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
    return verify(null, message, key, Uint8Array.from(signature));
  });
}

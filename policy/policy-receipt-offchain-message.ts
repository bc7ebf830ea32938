/**
 * The fixed parts of the Solana off-chain message a Solana wallet's Ed25519 key signs for a policy receipt
 * (./policy-receipt-statement.ts holds its text), shared by the signer that signs it
 * (signer/solana/policy-receipt-message.ts) and the owner's check that rebuilds it
 * (src/cli/commands/account/policy-receipt-check.ts). Both encode it with @solana/kit's off-chain message encoder
 * (the `\xffsolana offchain` signing domain, version 0, UTF-8 text of at most 1,232 bytes) from the statement, the
 * wallet's address as the one required signatory, and the application domain below — nothing else, so the verifier
 * needs only the statement and the address the owner knows to rebuild the same bytes.
 *
 * Defends: an Ed25519 signature over free text that could also be read as a Solana transaction message (a message's
 * first byte is its signature count or a version prefix of 0x80..; these bytes always begin with 0xff and the
 * signing domain, which both sides check after encoding); a receipt of another application's off-chain messages read
 * as Treasury's (the application domain). Does not defend: what the statement says (./policy-receipt-statement.ts
 * reads it strictly); which key signed (the caller verifies the signature against the wallet's address).
 */

/** The off-chain message standard's signing domain: the first 16 bytes of every such message. */
export const SOLANA_OFFCHAIN_SIGNING_DOMAIN: readonly number[] = Object.freeze([
  0xff,
  ...Array.from('solana offchain', (c) => c.charCodeAt(0)),
]);

/** The label whose SHA-256 is the receipts' application domain. */
export const POLICY_RECEIPT_APPLICATION_LABEL = 'Treasury signer policy receipt';
/** The receipts' application domain: SHA-256 of the label above (32 bytes), in base58; fixed, never derived anew. */
export const POLICY_RECEIPT_APPLICATION_DOMAIN = '2pYEdR4WmKi4Xynq4bD1ayU5tfx8UkjNV3XMj26yRRc2';
/** The off-chain message version the receipts use (0: the one with a UTF-8 text format and an application domain). */
export const POLICY_RECEIPT_OFFCHAIN_VERSION = 0;

/** True when `bytes` begins with the off-chain message signing domain (0xff, `solana offchain`) and holds more. */
export function hasOffchainSigningDomain(bytes: Uint8Array): boolean {
  return (
    bytes.length > SOLANA_OFFCHAIN_SIGNING_DOMAIN.length &&
    SOLANA_OFFCHAIN_SIGNING_DOMAIN.every((b, i) => bytes[i] === b)
  );
}

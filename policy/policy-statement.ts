/**
 * The owner-signed policy document as an Ed25519 key signs it (docs/adr/0012-owner-signed-policies.md): the
 * same four fields as the EIP-712 `WalletPolicy` message (./signed-policy.ts) — wallet, policy hash, version,
 * issued-at — written as a short text an owner who signed in with Solana (SIWS) signs with their wallet's
 * `signMessage` (raw Ed25519 over the text's UTF-8 bytes, as the SIWS sign-in itself is signed).
 *
 * Defends: a statement that could be read two ways — one field a line, in a fixed order, each value in its one
 * canonical spelling (the wallet as the document names it, the hash as lower-case hex, integers in decimal), under
 * a first line no sign-in message or Solana transaction starts with, so a signature over it is good for nothing
 * else. Does not defend: what the signer does with it (signer/owner-policy/).
 */
import { stringToBytes } from 'viem';
import { policyDocumentHash, policyDocumentWallet, type PolicyDocumentInput } from './signed-policy.js';

/** The statement's first line: says what the signature is for. */
export const POLICY_STATEMENT_TITLE = 'Treasury wallet policy (version 1 of this statement)';

/** The text an Ed25519 policy authority signs for `input`. */
export function policyStatementText(input: PolicyDocumentInput): string {
  return [
    POLICY_STATEMENT_TITLE,
    `Wallet: ${policyDocumentWallet(input.wallet)}`,
    `Policy hash: ${policyDocumentHash(input.policy).toLowerCase()}`,
    `Version: ${input.version}`,
    `Issued at: ${input.issuedAt}`,
  ].join('\n');
}

/** The statement's bytes, as `signMessage` signs them. */
export function policyStatementBytes(input: PolicyDocumentInput): Uint8Array {
  return stringToBytes(policyStatementText(input));
}

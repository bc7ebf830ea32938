/**
 * The text of a policy receipt (./policy-receipts.ts): what the signer holds for one wallet, as it states it — eight
 * lines, a fixed first line and `key: value` lines in a fixed order, every value read from the signer's own store or
 * clock, except the wallet address it checked and the owner's nonce (64 lower-case hex digits, checked by the
 * protocol's schema and again here):
 *
 *   Treasury signer policy receipt v1
 *   wallet: 0x… (EIP-55) | <base58 Solana address>
 *   version: <n> | none
 *   policy_hash: 0x<64 hex> | none
 *   issued_at: <unix seconds> | none
 *   authority: <owner|approver|first_signer> <address|none> | none
 *   signer_time: <unix seconds>
 *   nonce: <64 hex>
 *
 * Defends: a caller that slips text of its own into what the wallet's key signs (nothing but the nonce and the
 * checked address is the request's, each in one spelling); a receipt read as something else — the first line is no
 * EIP-4361 sign-in's (`<domain> wants you to sign in with your Ethereum account:`), no key is one of its field names
 * (`URI`, `Version`, `Chain ID`, `Nonce`, `Issued At`), and the signature is an EIP-191 personal message's or, for a
 * Solana wallet, a Solana off-chain message's (./policy-receipts.ts), never a transaction or EIP-712 data. Does not
 * defend: what the state is after `signer_time`.
 * The text itself is built and read in one place (policy/policy-receipt-statement.ts), so the CLI reads exactly what
 * is written here.
 */
import { buildPolicyReceiptStatement } from '../../policy/policy-receipt-statement.js';
import type { GetWalletPolicyResult } from '../protocol/owner-policy-protocol.js';
import { POLICY_RECEIPT_MAX_CHARS, receiptNonceSchema } from '../protocol/owner-policy-protocol.js';
import { SignerFault } from '../signer-error.js';

export { POLICY_RECEIPT_HEADER } from '../../policy/policy-receipt-statement.js';

/** What a receipt states: the signer's state of the wallet, its clock, and the owner's nonce. */
export interface PolicyReceiptFacts {
  /** The address checked: a 0x address (any case: written in its EIP-55 form), or a Solana wallet's base58. */
  wallet: string;
  held: Pick<GetWalletPolicyResult, 'authority' | 'current'>;
  signerTime: number;
  nonce: string;
}

/** The statement's text: the same facts always give the same text. */
export function policyReceiptStatement(facts: PolicyReceiptFacts): string {
  const { current, authority } = facts.held;
  if (!receiptNonceSchema.safeParse(facts.nonce).success || !Number.isSafeInteger(facts.signerTime))
    throw new SignerFault('invalid_request', 'a receipt nonce is 32 bytes as 64 lower-case hex digits');
  const text = buildPolicyReceiptStatement({
    wallet: facts.wallet,
    version: current ? current.version : null,
    policy_hash: current ? current.policy_hash : null,
    issued_at: current ? current.issued_at : null,
    authority: authority ? { kind: authority.kind, address: authority.address } : null,
    signer_time: facts.signerTime,
    nonce: facts.nonce,
  });
  if (text.length > POLICY_RECEIPT_MAX_CHARS) throw new SignerFault('internal_error', 'receipt statement too long');
  return text;
}

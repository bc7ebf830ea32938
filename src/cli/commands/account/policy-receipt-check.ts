/**
 * Checks a signer's policy receipt (GET /v1/wallets/{id}/policy/receipt; its text is built and read in
 * policy/policy-receipt-statement.ts) as the owner's side: the signature is an EIP-191 personal_sign
 * that must recover to the wallet address the owner knows (never the API's word for it), the text must be exactly the
 * receipt's eight lines, naming that wallet and the nonce just chosen; then what the signer holds is compared with
 * the document the owner expects in force: `in_force`, `withheld` (the signer holds an older version, or none) or
 * `mismatch` (another document at that version, or a newer one than expected).
 *
 * Defends: a receipt the API made up or edited (it does not recover to the wallet's address), one kept from before
 * and replayed (another nonce), one of another wallet; a text that only looks like a receipt (strict line-by-line
 * reading, fixed patterns, every number bounded). Does not defend: what happens after `signer_time` — the receipt is
 * the signer's state when it was made.
 */
import { recoverMessageAddress } from 'viem';
import { CliError } from '../../core/cli-error.js';
import {
  POLICY_RECEIPT_HEADER,
  parsePolicyReceiptStatement,
  type ReceiptFacts,
} from '../../../../policy/policy-receipt-statement.js';

export type { ReceiptAuthority, ReceiptFacts } from '../../../../policy/policy-receipt-statement.js';
export const RECEIPT_HEADER = POLICY_RECEIPT_HEADER;
/** The facts of a receipt's text, read strictly; undefined when it is not exactly a receipt. */
export const parseReceiptStatement = parsePolicyReceiptStatement;

/** What the owner expects the signer to hold (the last document this CLI signed, or what the API claims). */
export interface ExpectedDocument {
  version: number | null;
  policy_hash: string | null;
}

export type ReceiptStatus = 'in_force' | 'withheld' | 'mismatch';

function invalid(reason: string, message: string, details: Record<string, unknown> = {}): CliError {
  return new CliError({
    code: 'policy_receipt_invalid',
    userMessage: `The policy receipt does not verify (${reason}): ${message} Do not trust what the API says of this wallet's policy.`,
    details: { reason, ...details },
  });
}

/**
 * The receipt's facts once its signature recovers to `address` (the wallet address the owner knows), its text names
 * that wallet and `nonce`; throws `policy_receipt_invalid` (details.reason) otherwise.
 */
export async function verifyReceipt(
  receipt: { statement: string; signature: string },
  address: string,
  nonce: string,
): Promise<ReceiptFacts> {
  if (!/^0x[0-9a-fA-F]{130}$/.test(receipt.signature)) throw invalid('signature', 'the signature is malformed.');
  let signer: string;
  try {
    signer = await recoverMessageAddress({ message: receipt.statement, signature: receipt.signature as `0x${string}` });
  } catch {
    throw invalid('signature', 'the signature does not recover to any address.');
  }
  if (signer.toLowerCase() !== address.toLowerCase())
    throw invalid('signature', `it was not signed by the wallet's key ${address} (it recovers to ${signer}).`, {
      recovered: signer,
    });
  const facts = parseReceiptStatement(receipt.statement);
  if (!facts) throw invalid('statement', 'its text is not a signer policy receipt.');
  if (facts.wallet.toLowerCase() !== address.toLowerCase())
    throw invalid('wallet', `it is about ${facts.wallet}, not ${address}.`);
  if (facts.nonce !== nonce)
    throw invalid('nonce', 'it answers another nonce than the one just sent (a receipt from before, replayed).');
  return facts;
}

/** What the signer holds, compared with what the owner expects in force. */
export function receiptStatus(facts: ReceiptFacts, expected: ExpectedDocument): ReceiptStatus {
  const same =
    facts.version === expected.version &&
    (facts.policy_hash ?? '').toLowerCase() === (expected.policy_hash ?? '').toLowerCase();
  if (same) return 'in_force';
  if (expected.version !== null && (facts.version === null || facts.version < expected.version)) return 'withheld';
  return 'mismatch';
}

/**
 * Checks a signer's policy receipt (GET /v1/wallets/{id}/policy/receipt; the signer builds it in
 * signer/owner-policy/policy-receipt-statement.ts) as the owner's side: the signature is an EIP-191 personal_sign
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

export const RECEIPT_HEADER = 'Treasury signer policy receipt v1';
const MAX_VERSION = 2 ** 48;
const MAX_SECONDS = 253_402_300_799;

export interface ReceiptAuthority {
  kind: 'owner' | 'approver' | 'first_signer';
  address: string | null;
}

/** What a receipt states, read from its text. */
export interface ReceiptFacts {
  wallet: string;
  version: number | null;
  policy_hash: string | null;
  issued_at: number | null;
  authority: ReceiptAuthority | null;
  signer_time: number;
  nonce: string;
}

/** What the owner expects the signer to hold (the last document this CLI signed, or what the API claims). */
export interface ExpectedDocument {
  version: number | null;
  policy_hash: string | null;
}

export type ReceiptStatus = 'in_force' | 'withheld' | 'mismatch';

const KEYS = ['wallet', 'version', 'policy_hash', 'issued_at', 'authority', 'signer_time', 'nonce'] as const;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;
const HASH = /^0x[0-9a-f]{64}$/;
const NONCE = /^[0-9a-f]{64}$/;

function invalid(reason: string, message: string, details: Record<string, unknown> = {}): CliError {
  return new CliError({
    code: 'policy_receipt_invalid',
    userMessage: `The policy receipt does not verify (${reason}): ${message} Do not trust what the API says of this wallet's policy.`,
    details: { reason, ...details },
  });
}

/** A bounded decimal, or null for `none` (when allowed); undefined when malformed. */
function decimal(value: string, max: number, noneAllowed: boolean): number | null | undefined {
  if (noneAllowed && value === 'none') return null;
  if (!DECIMAL.test(value)) return undefined;
  const n = Number(value);
  return n <= max ? n : undefined;
}

function authorityOf(value: string): ReceiptAuthority | null | undefined {
  if (value === 'none') return null;
  const [kind, address, ...rest] = value.split(' ');
  if (rest.length > 0 || (kind !== 'owner' && kind !== 'approver' && kind !== 'first_signer')) return undefined;
  if (address === 'none') return { kind, address: null };
  if (address === undefined || !(EVM_ADDRESS.test(address) || BASE58_ADDRESS.test(address))) return undefined;
  return { kind, address };
}

/** The facts of a receipt's text, read strictly; undefined when it is not exactly a receipt. */
export function parseReceiptStatement(text: string): ReceiptFacts | undefined {
  if (text.length > 1024) return undefined;
  const lines = text.split('\n');
  if (lines.length !== KEYS.length + 1 || lines[0] !== RECEIPT_HEADER) return undefined;
  const values: string[] = [];
  for (const [i, key] of KEYS.entries()) {
    const line = lines[i + 1]!;
    if (!line.startsWith(`${key}: `)) return undefined;
    values.push(line.slice(key.length + 2));
  }
  const [wallet, versionText, hashText, issuedText, authorityText, timeText, nonce] = values as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const version = decimal(versionText, MAX_VERSION, true);
  const policy_hash = hashText === 'none' ? null : HASH.test(hashText) ? hashText : undefined;
  const issued_at = decimal(issuedText, MAX_SECONDS, true);
  const authority = authorityOf(authorityText);
  const signer_time = decimal(timeText, MAX_SECONDS, false);
  if (!EVM_ADDRESS.test(wallet) || !NONCE.test(nonce)) return undefined;
  if (version === undefined || policy_hash === undefined || issued_at === undefined) return undefined;
  if (authority === undefined || signer_time === undefined || signer_time === null) return undefined;
  // A policy is stated whole or not at all.
  const stated = [version, policy_hash, issued_at].filter((v) => v !== null).length;
  if (stated !== 0 && stated !== 3) return undefined;
  return { wallet, version, policy_hash, issued_at, authority, signer_time, nonce };
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

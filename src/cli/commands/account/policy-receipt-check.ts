/**
 * Checks a signer's policy receipt (GET /v1/wallets/{id}/policy/receipt; its text is built and read in
 * policy/policy-receipt-statement.ts) as the owner's side: the signature must be the wallet's own, checked against the
 * wallet address the owner knows (never the API's word for it) — for an EVM wallet an EIP-191 personal_sign that must
 * recover to the address; for a Solana wallet an Ed25519 signature (RFC 8032 strict: @noble/curves with ZIP-215 off)
 * under the address's key of the Solana off-chain message rebuilt here from the statement and the address alone
 * (@solana/kit's encoder; its fixed parts in policy/policy-receipt-offchain-message.ts, as the signer builds it in
 * signer/solana/policy-receipt-message.ts) — and the text must be exactly the receipt's eight lines, naming that
 * wallet and the nonce just chosen; then what the signer holds is compared with the document the owner expects in
 * force: `in_force`, `withheld` (the signer holds an older version, or none) or `mismatch` (another document at that
 * version, or a newer one than expected). The owner may instead name the document they expect (`--expect-version`,
 * `--expect-hash`: a policy signed elsewhere, e.g. in the dashboard), read here with bounded schemas and compared the
 * same way; without a hash, the version alone decides.
 *
 * Defends: a receipt the API made up or edited (it does not recover to, or verify under, the wallet's address), one
 * kept from before and replayed (another nonce), one of another wallet; a scheme that does not fit the address (the
 * address the owner knows decides how the signature is checked, never the API's `scheme`); a text that only looks
 * like a receipt (strict line-by-line reading, fixed patterns, every number bounded). Does not defend: what happens
 * after `signer_time` — the receipt is the signer's state when it was made.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  address as solanaAddress,
  getAddressEncoder,
  getBase58Encoder,
  getOffchainMessageEncoder,
  isAddress,
  offchainMessageApplicationDomain,
  offchainMessageContentUtf8Of1232BytesMax,
} from '@solana/kit';
import { recoverMessageAddress } from 'viem';
import { z } from 'zod';
import { CliError } from '../../core/cli-error.js';
import {
  hasOffchainSigningDomain,
  POLICY_RECEIPT_APPLICATION_DOMAIN,
  POLICY_RECEIPT_OFFCHAIN_VERSION,
} from '../../../../policy/policy-receipt-offchain-message.js';
import { MAX_POLICY_VERSION } from '../../../../policy/signed-policy.js';
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

/** The scheme a receipt of `address`'s wallet must carry: the address decides, never the API. */
export type ReceiptScheme = 'eip191' | 'solana_offchain';

/** A receipt as the API relays it; `scheme`, when given, must be the one the address's family signs with. */
export interface RelayedReceipt {
  scheme?: string;
  statement: string;
  signature: string;
}

/**
 * The receipt's facts once its signature is the wallet's — it recovers to `address` (an EVM wallet the owner knows) or
 * verifies under it (a Solana wallet's base58 address) — and its text names that wallet and `nonce`; throws
 * `policy_receipt_invalid` (details.reason) otherwise.
 */
export async function verifyReceipt(receipt: RelayedReceipt, address: string, nonce: string): Promise<ReceiptFacts> {
  const solana = !address.startsWith('0x');
  const scheme: ReceiptScheme = solana ? 'solana_offchain' : 'eip191';
  if (receipt.scheme !== undefined && receipt.scheme !== scheme)
    throw invalid('scheme', `a receipt of ${address} is signed as ${scheme}, not ${receipt.scheme}.`, {
      scheme: receipt.scheme,
    });
  if (solana) verifySolanaSignature(receipt, address);
  else await verifyEvmSignature(receipt, address);
  const facts = parseReceiptStatement(receipt.statement);
  if (!facts) throw invalid('statement', 'its text is not a signer policy receipt.');
  // An EVM address in any case; a base58 address in its one spelling.
  const sameWallet = solana ? facts.wallet === address : facts.wallet.toLowerCase() === address.toLowerCase();
  if (!sameWallet) throw invalid('wallet', `it is about ${facts.wallet}, not ${address}.`);
  if (facts.nonce !== nonce)
    throw invalid('nonce', 'it answers another nonce than the one just sent (a receipt from before, replayed).');
  return facts;
}

async function verifyEvmSignature(receipt: RelayedReceipt, address: string): Promise<void> {
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
}

const BASE58_SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

/**
 * The off-chain message the wallet's key signed, rebuilt from the statement and the address alone: version 0, UTF-8
 * text, Treasury's receipt application domain, the wallet its one required signatory.
 */
export function receiptMessage(statement: string, wallet: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(
      getOffchainMessageEncoder().encode({
        version: POLICY_RECEIPT_OFFCHAIN_VERSION,
        applicationDomain: offchainMessageApplicationDomain(POLICY_RECEIPT_APPLICATION_DOMAIN),
        requiredSignatories: [{ address: solanaAddress(wallet) }],
        content: offchainMessageContentUtf8Of1232BytesMax(statement),
      }),
    );
  } catch {
    throw invalid('statement', 'its text does not fit a Solana off-chain message.');
  }
  if (!hasOffchainSigningDomain(bytes)) throw invalid('statement', 'it is not a Solana off-chain message.');
  return bytes;
}

/** The Ed25519 signature of the off-chain message rebuilt from the statement, strictly verified under `address`. */
function verifySolanaSignature(receipt: RelayedReceipt, address: string): void {
  if (!isAddress(address)) throw invalid('address', `${address} is not a Solana address.`);
  if (!BASE58_SIGNATURE.test(receipt.signature)) throw invalid('signature', 'the signature is malformed.');
  const signature = getBase58Encoder().encode(receipt.signature);
  if (signature.length !== 64) throw invalid('signature', 'the signature is not 64 bytes.');
  const message = receiptMessage(receipt.statement, address);
  let valid = false;
  try {
    valid = ed25519.verify(Uint8Array.from(signature), message, Uint8Array.from(getAddressEncoder().encode(address)), {
      zip215: false,
    });
  } catch {
    valid = false;
  }
  if (!valid) throw invalid('signature', `it was not signed by the wallet's key ${address}.`);
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

/** `--expect-version` (1..MAX_POLICY_VERSION, digits only) and `--expect-hash` (0x + 64 lower-case hex), as typed. */
export const ownerExpectationFlagsSchema = z
  .object({
    expectVersion: z
      .string()
      .max(16)
      .regex(/^[1-9][0-9]*$/, 'a version number from 1')
      .transform(Number)
      .pipe(z.number().int().min(1).max(MAX_POLICY_VERSION))
      .optional(),
    expectHash: z
      .string()
      .max(66)
      .regex(/^0x[0-9a-f]{64}$/, 'a policy hash: 0x and 64 lower-case hex digits')
      .optional(),
  })
  .refine((flags) => flags.expectHash === undefined || flags.expectVersion !== undefined, {
    message: 'needs --expect-version',
    path: ['expectHash'],
  });

/** The document the owner says they signed: a version, and its policy hash when they give it. */
export interface OwnerExpectation {
  version: number;
  policy_hash: string | null;
}

const FLAG_OF: Record<string, string> = { expectVersion: '--expect-version', expectHash: '--expect-hash' };

/**
 * The owner's expectation from the flags, undefined when neither is given; throws `invalid_argument` (exit 2,
 * details.flag) on a value out of bounds or a hash without a version. The raw value is not echoed back.
 */
export function ownerExpectationFromFlags(flags: {
  expectVersion?: unknown;
  expectHash?: unknown;
}): OwnerExpectation | undefined {
  const parsed = ownerExpectationFlagsSchema.safeParse({
    expectVersion: flags.expectVersion,
    expectHash: flags.expectHash,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flag = FLAG_OF[String(issue?.path[0])] ?? '--expect-version';
    throw new CliError({
      code: 'invalid_argument',
      userMessage: `${flag}: ${issue?.message ?? 'invalid value'}${flag === '--expect-version' ? ` (1 to ${MAX_POLICY_VERSION})` : ''}.`,
      exitCode: 2,
      details: { flag },
    });
  }
  const { expectVersion, expectHash } = parsed.data;
  if (expectVersion === undefined) return undefined;
  return { version: expectVersion, policy_hash: expectHash ?? null };
}

/**
 * What the signer holds, compared with the document the owner names: older or none is `withheld`, newer is
 * `mismatch`; at that version, `in_force` unless the owner gave a hash and the signer holds another.
 */
export function expectationStatus(
  facts: Pick<ReceiptFacts, 'version' | 'policy_hash'>,
  expected: OwnerExpectation,
): ReceiptStatus {
  if (facts.version === null || facts.version < expected.version) return 'withheld';
  if (facts.version > expected.version) return 'mismatch';
  if (expected.policy_hash === null) return 'in_force';
  return (facts.policy_hash ?? '').toLowerCase() === expected.policy_hash ? 'in_force' : 'mismatch';
}

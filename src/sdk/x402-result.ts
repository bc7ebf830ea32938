/**
 * What one x402 exchange through `createX402Buyer` returns: the final response (status, headers, body as
 * text), whether a payment was made, the settlement receipt with the price in raw units and USD, and the
 * accepts entry that was paid. `toX402Receipt` turns a decoded receipt header into the SDK's receipt.
 * `summarizePayment` says what a paid result establishes: the network and amount that were signed (or that
 * Treasury verified settled) and the receipt's transaction only when it has a settlement's shape on that
 * network (`settlementTransaction`).
 *
 * Defends against: a seller's receipt passing for the payment — its `network`, `amount` and `transaction` are
 * the seller's words (any text within the codec's bounds), so whatever reports "what was paid" (the CLI's
 * `xx buy`, the `xx mcp` pay tool) reads `summarizePayment`, where only a hash-shaped transaction gets through.
 * Does not defend against: a well-formed transaction hash that names another transaction (Treasury checks a
 * reported settlement on chain; nothing here does).
 */
import { isSignature } from '@solana/kit';
import { formatUsd, isRawAmount, isUsdString, parseUsd } from '../../policy/money.js';
import type { PaymentRequirements, SettlementReceipt } from '../x402/wire-schemas.js';
import type { SignedTerms } from './signed-terms.js';
import type { PayReply, Settlement } from './treasury-client-schemas.js';

/** The decoded receipt: every field as the seller wrote it (`summarizePayment` for what was signed). */
export interface X402Receipt {
  success: boolean;
  /** The settlement transaction the seller names: a hash on EVM chains, a base58 signature on Solana — or any text. */
  transaction: string;
  payer?: string;
  network: string;
  /** The amount the seller says was paid, raw 6-decimal token units (its `amount` when present, else the accepted price). */
  amount_raw?: string;
  /** `amount_raw` as a USD decimal string (integer math). */
  amount_usd?: string;
  errorReason?: string;
}

export interface X402Result {
  status: number;
  headers: Headers;
  body: string;
  /** True when a payment was sent and the seller answered 2xx. */
  paid: boolean;
  /** The CAIP-2 network paid on (`eip155:84532`, `solana:EtWT…`), when paid. */
  network?: string;
  /** Decoded `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`, when the seller sent one: its words (`summarizePayment` for what was signed). */
  receipt?: X402Receipt;
  /** The accepts entry that was paid. */
  requirements?: PaymentRequirements;
  /**
   * What Treasury signed: authorization and signature (EVM) or `transaction` (Solana), authorization_id,
   * decision_id (a Treasury wallet's payment).
   */
  payment?: PayReply;
  /**
   * What the local key signed, and its address (a self-custody payment: `createX402Buyer({ account })` or
   * `({ solanaSigner })`): the EVM authorization, or the Solana transaction.
   */
  localPayment?: SignedTerms & { payer: string };
  /** For an `upto` payment: the settlement Treasury verified and recorded (the unsettled part given back). */
  settlement?: Settlement;
  /** For an `upto` payment whose settlement could not be recorded: the error code (the payment stands). */
  settlementError?: string;
  /**
   * For an EVM `exact` payment of a Treasury wallet whose receipt names a transaction: the report of that
   * settlement, running in the background (bounded retries); it resolves to the settlement Treasury recorded
   * or `settlementError`, and never rejects. Await it before exiting to be sure the report was made.
   */
  settlementReport?: Promise<Pick<X402Result, 'settlement' | 'settlementError'>>;
}

export function toX402Receipt(receipt: SettlementReceipt, requirements: PaymentRequirements | undefined): X402Receipt {
  const settled = (receipt as { amount?: unknown }).amount;
  const amountRaw = typeof settled === 'string' && isRawAmount(settled) ? settled : requirements?.amount;
  return {
    success: receipt.success,
    transaction: receipt.transaction,
    network: receipt.network,
    ...(receipt.payer !== undefined ? { payer: receipt.payer } : {}),
    ...(receipt.errorReason !== undefined ? { errorReason: receipt.errorReason } : {}),
    ...(amountRaw !== undefined ? { amount_raw: amountRaw, amount_usd: formatUsd(BigInt(amountRaw)) } : {}),
  };
}

const EVM_TRANSACTION_HASH = /^0x[0-9a-fA-F]{64}$/;

/**
 * `transaction` when it has the shape of a settlement on `network`: on an `eip155` chain a transaction hash
 * (0x + 64 hex), on Solana a transaction signature (base58 that decodes to 64 bytes); otherwise undefined.
 */
export function settlementTransaction(network: string, transaction: unknown): string | undefined {
  if (typeof transaction !== 'string') return undefined;
  if (network.startsWith('eip155:')) return EVM_TRANSACTION_HASH.test(transaction) ? transaction : undefined;
  if (!network.startsWith('solana:')) return undefined;
  try {
    return isSignature(transaction) ? transaction : undefined;
  } catch {
    return undefined; // kit's isSignature throws, rather than answering false, on a character outside base58
  }
}

/** What a paid result establishes (see the header); none of it is the seller's receipt. */
export interface PaymentSummary {
  /** The CAIP-2 network the payment was signed for (the accepted entry's). */
  network: string;
  /**
   * Raw 6-decimal token units: what Treasury verified settled, when it did (an `upto` payment's settlement, or
   * an `exact` one's report once awaited); otherwise the amount signed (for `upto`, the signed maximum).
   */
  amount_raw: string;
  /** `amount_raw` as a USD decimal string (integer math). */
  amount_usd: string;
  /**
   * The settling transaction: the one Treasury verified, else the receipt's when it has a settlement's shape on
   * `network` (`settlementTransaction`); null when there is none of that shape.
   */
  transaction: string | null;
}

/** What a paid result establishes (see `PaymentSummary`); undefined when nothing was paid. */
export function summarizePayment(result: X402Result): PaymentSummary | undefined {
  const { requirements } = result;
  if (!result.paid || !requirements) return undefined;
  const settled = result.settlement?.settled_usd;
  const amount = settled !== undefined && isUsdString(settled) ? parseUsd(settled) : BigInt(requirements.amount);
  return {
    network: requirements.network,
    amount_raw: amount.toString(),
    amount_usd: formatUsd(amount),
    transaction:
      settlementTransaction(requirements.network, result.settlement?.transaction ?? result.receipt?.transaction) ??
      null,
  };
}

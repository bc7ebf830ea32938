/**
 * What one x402 exchange through `createX402Buyer` returns: the final response (status, headers, body as
 * text), whether a payment was made, the settlement receipt with the price in raw units and USD, and the
 * accepts entry that was paid. `toX402Receipt` turns a decoded receipt header into the SDK's receipt.
 */
import { formatUsd, isRawAmount } from '../../policy/money.js';
import type { PaymentRequirements, SettlementReceipt } from '../x402/wire-schemas.js';
import type { SignedTerms } from './signed-terms.js';
import type { PayReply, Settlement } from './treasury-client-schemas.js';

export interface X402Receipt {
  success: boolean;
  /** The settlement transaction: its hash on EVM chains, its base58 signature on Solana. */
  transaction: string;
  payer?: string;
  network: string;
  /** The amount paid in raw 6-decimal token units (the receipt's `amount` when present, else the accepted price). */
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
  /** Decoded `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`, when the seller sent one. */
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

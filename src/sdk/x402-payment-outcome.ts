/**
 * What the buyer makes of the seller's answer to a signed payment: the settlement receipt it carries, the
 * result of a payment taken (with Treasury's record, or the local payer's terms), the reported settlement of an
 * `upto` payment, and — for a payment not taken — whether the wallet simply lacked the funds.
 *
 * Defends against: an unreadable receipt being read as "not settled" (it stays undecided, so the caller is told
 * the seller may have charged), and a failed settlement report failing a payment that was made (it becomes the
 * result's `settlementError`). Does not defend: the seller's word is the seller's; a receipt is not checked on
 * chain here.
 */
import { formatUsd } from '../../policy/money.js';
import { decodeSettlementReceipt, X402_HEADERS } from '../x402/header-codec.js';
import type { PaymentRequirements, SettlementReceipt } from '../x402/wire-schemas.js';
import { isSvmTerms, type BuyerPayer, type SignOutcome } from './buyer-payer.js';
import { readSvmExactTransfer } from './svm-exact-transfer.js';
import { InsufficientFundsError, TreasurySdkError, type X402PaymentFailedError } from './sdk-errors.js';
import { toX402Receipt, type X402Result } from './x402-result.js';

export interface ReadReceipt {
  /** The receipt header as sent, or null when there was none. */
  header: string | null;
  /** The receipt decoded; undefined when absent or unreadable. */
  decoded: SettlementReceipt | undefined;
  receipt: X402Result['receipt'];
}

/** The settlement receipt of the seller's answer (PAYMENT-RESPONSE, or its legacy name). */
export function readReceipt(headers: Headers, requirements: PaymentRequirements): ReadReceipt {
  const header = headers.get(X402_HEADERS.paymentResponse) ?? headers.get(X402_HEADERS.paymentResponseLegacy);
  let decoded: SettlementReceipt | undefined;
  if (header !== null) {
    try {
      decoded = decodeSettlementReceipt(header);
    } catch {
      decoded = undefined;
    }
  }
  return { header, decoded, receipt: decoded ? toX402Receipt(decoded, requirements) : undefined };
}

/** The result of a payment the seller took (a 2xx answer to the signed request). */
export function paidResult(
  response: Response,
  body: string,
  receipt: X402Result['receipt'],
  requirements: PaymentRequirements,
  { terms, payment, payer }: SignOutcome,
): X402Result {
  return {
    status: response.status,
    headers: response.headers,
    body,
    paid: true,
    network: requirements.network,
    ...(receipt ? { receipt } : {}),
    requirements,
    ...(payment ? { payment } : { localPayment: { ...terms, payer: payer ?? payerOf(terms) } }),
  };
}

/** Who signed `terms`: the authorization's `from` on EVM, the transfer's authority on Solana. */
function payerOf(terms: SignOutcome['terms']): string {
  if (isSvmTerms(terms)) return readSvmExactTransfer(terms.transaction).authority;
  return terms.scheme === 'upto' ? terms.permit2_authorization.from : terms.authorization.from;
}

/** Reports an `upto` settlement when asked to; never throws — a failure is the result's `settlementError`. */
export async function recordSettlement(
  payer: BuyerPayer,
  authorizationId: string,
  transaction: string,
): Promise<Pick<X402Result, 'settlement' | 'settlementError'>> {
  if (!payer.recordSettlement || !/^0x[0-9a-fA-F]{64}$/.test(transaction)) return {};
  try {
    return { settlement: await payer.recordSettlement(authorizationId, transaction) };
  } catch (err) {
    return { settlementError: err instanceof TreasurySdkError ? err.code : 'settlement_not_recorded' };
  }
}

/**
 * A payment the seller did not take: when the wallet (read now, fresh, in the price's asset) holds less
 * than the price, `InsufficientFundsError` with recovery `fund_wallet`; otherwise the seller's refusal as it is.
 */
export async function whyNotPaid(
  payer: BuyerPayer,
  failure: X402PaymentFailedError,
  requirements: PaymentRequirements,
): Promise<TreasurySdkError> {
  if (!payer.balance) return failure;
  try {
    const balance = await payer.balance(requirements);
    if (balance.stale || balance.asset.toLowerCase() !== requirements.asset.toLowerCase()) return failure;
    const have = BigInt(balance.balance_raw);
    const need = BigInt(requirements.amount);
    if (have >= need) return failure;
    return new InsufficientFundsError(failure, balance, { raw: need - have, usd: formatUsd(need - have) });
  } catch {
    return failure;
  }
}

/**
 * What the buyer makes of the seller's answer to a signed payment: the settlement receipt it carries, the
 * result of a payment taken (with Treasury's record, or the local payer's terms), the reported settlement of a
 * Treasury payment (an `upto` one awaited, its unsettled part given back; an `exact` one, EVM or Solana, in the
 * background, so the payment shows `settled` in Treasury's histories), and — for a payment not taken —
 * whether the wallet simply lacked the funds.
 *
 * Defends against: an unreadable receipt being read as "not settled" (it stays undecided, so the caller is told
 * the seller may have charged), and a failed settlement report failing a payment that was made (it becomes the
 * result's `settlementError`, or what `settlementReport` resolves to; it never rejects). A background report
 * retries a bounded number of times while the settlement is not yet deep enough or not yet seen, on timers
 * that never keep a process alive. Does not defend: the seller's word is the seller's; a receipt is not
 * checked on chain here (Treasury checks what is reported); a process that exits before a background report's
 * retries ran loses them (await `settlementReport` to be sure).
 */
import { formatUsd } from '../../policy/money.js';
import { decodeSettlementReceipt, X402_HEADERS } from '../x402/header-codec.js';
import type { PaymentRequirements, SettlementReceipt } from '../x402/wire-schemas.js';
import type { BuyerPayer, SignOutcome } from './buyer-payer.js';
import { readSvmExactTransfer } from './svm-exact-transfer.js';
import {
  InsufficientFundsError,
  TreasuryApiError,
  TreasurySdkError,
  TreasuryUnreachableError,
  type X402PaymentFailedError,
} from './sdk-errors.js';
import { isSvmTerms } from './signed-terms.js';
import { settlementTransactionSchema, type PayReply } from './treasury-client-schemas.js';
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

/** What a settlement report came to: the settlement Treasury recorded, or why not (an error code). */
export type SettlementReport = Pick<X402Result, 'settlement' | 'settlementError'>;

/**
 * The pauses between the attempts of a background report: 7 attempts over 50 s, enough for Base mainnet's
 * default depth (10 blocks, about 20 s) with room for a lagging RPC.
 */
export const SETTLEMENT_REPORT_DELAYS_MS: readonly number[] = Object.freeze([
  2_000, 3_000, 5_000, 8_000, 12_000, 20_000,
]);

/** The codes of a report that may succeed later: not deep enough yet, the RPC unreachable, or its reads all taken. */
const RETRIED_CODES: ReadonlySet<string> = new Set([
  'settlement_unconfirmed',
  'chain_unavailable',
  'chain_busy',
  'chain_reads_exceeded',
]);

/** Whether a report may succeed later: not deep enough yet, not seen yet by Treasury's RPC, or nobody answered. */
function worthRetrying(err: unknown): boolean {
  if (err instanceof TreasuryUnreachableError) return true;
  if (!(err instanceof TreasuryApiError)) return false;
  if (RETRIED_CODES.has(err.code)) return true;
  const reason = (err.body as { reason?: unknown } | undefined)?.reason;
  return err.code === 'settlement_not_verified' && reason === 'transaction_not_found';
}

/** A pause that does not keep the process alive on its own. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms) as unknown as { unref?: () => void };
    timer.unref?.();
  });
}

/**
 * Reports the transaction that settled a Treasury payment, retrying after each of `delaysMs` while it may
 * succeed later (none by default); never throws — a failure is `settlementError`.
 */
export async function recordSettlement(
  payer: BuyerPayer,
  authorizationId: string,
  transaction: string,
  delaysMs: readonly number[] = [],
): Promise<SettlementReport> {
  if (!payer.recordSettlement || !settlementTransactionSchema.safeParse(transaction).success) return {};
  for (let attempt = 0; ; attempt++) {
    try {
      return { settlement: await payer.recordSettlement(authorizationId, transaction) };
    } catch (err) {
      const delay = delaysMs[attempt];
      if (delay === undefined || !worthRetrying(err))
        return { settlementError: err instanceof TreasurySdkError ? err.code : 'settlement_not_recorded' };
      await pause(delay);
    }
  }
}

/**
 * The paid result with its settlement reported to Treasury: an `upto` payment's report is awaited (its
 * unsettled part is given back before the caller goes on); an `exact` payment's (EVM, or Solana: the receipt's
 * transaction signature) runs in the background with bounded retries, `settlementReport` resolving to what it
 * came to.
 */
export async function withSettlementReport(
  result: X402Result,
  payer: BuyerPayer,
  payment: PayReply,
  transaction: string,
  delaysMs: readonly number[] = SETTLEMENT_REPORT_DELAYS_MS,
): Promise<X402Result> {
  if (payment.scheme === 'upto')
    return { ...result, ...(await recordSettlement(payer, payment.authorization_id, transaction)) };
  return { ...result, settlementReport: recordSettlement(payer, payment.authorization_id, transaction, delaysMs) };
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

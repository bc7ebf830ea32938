/**
 * `xx buy` waits for the buyer SDK's background report of an `exact` payment's settlement, briefly: a CLI
 * process ends right after the payment, and a report it did not wait for is lost — the payment would stay
 * `signed` (then `expired`) in `xx history` although the seller settled it. The wait is bounded
 * (BUY_SETTLEMENT_WAIT_MS): the seller's answer is already in hand and is printed whatever the report says.
 *
 * Defends: `xx history` right after `xx buy` showing a settled payment as unsettled (on a network whose
 * required depth is reached within the wait). Does not defend: a settlement that needs longer to be deep
 * enough (`settlement_error` is then `settlement_report_pending`; the payment itself stands, and it shows
 * `settled` once something reports it — a seller on Treasury whose ledger row is verified, or the SDK).
 * `--settlement-wait <seconds>` (0 to 120, whole seconds) sets the wait: 0 for a script that reports nothing and must
 * not be held (the report is then `settlement_report_pending` at once).
 */
import type { X402Result } from '../../../sdk/index.js';
import { wholeSecondsArgument } from '../seller/seller-kit.js';

/** How long `xx buy` waits for a background settlement report at most (Base mainnet's 10 blocks take about 20 s). */
export const BUY_SETTLEMENT_WAIT_MS = 30_000;

/** The longest `--settlement-wait`, in seconds. */
export const MAX_SETTLEMENT_WAIT_SECONDS = 120;

/** `--settlement-wait`'s value in ms (BUY_SETTLEMENT_WAIT_MS when absent); invalid_argument unless 0..120 whole seconds. */
export function settlementWaitMs(raw: string | undefined): number {
  if (raw === undefined) return BUY_SETTLEMENT_WAIT_MS;
  return wholeSecondsArgument('--settlement-wait', raw, 0, MAX_SETTLEMENT_WAIT_SECONDS) * 1000;
}

/** `result` with its background settlement report's outcome, waited for at most `waitMs`. */
export async function awaitSettlementReport(result: X402Result, waitMs = BUY_SETTLEMENT_WAIT_MS): Promise<X402Result> {
  const report = result.settlementReport;
  if (!report) return result;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Pick<X402Result, 'settlementError'>>((resolve) => {
    timer = setTimeout(() => resolve({ settlementError: 'settlement_report_pending' }), waitMs);
  });
  try {
    return { ...result, ...(await Promise.race([report, late])) };
  } finally {
    clearTimeout(timer);
  }
}

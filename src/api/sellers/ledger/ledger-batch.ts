/**
 * Stores a batch of ledger rows as POST /v1/ledger/batch (a service PAT's seller) and POST
 * /v1/gate/ledger/batch (each row's seller by endpoint) both answer it: each row's seller is found first, the
 * whole batch is admitted against its sellers' pending-row caps (./ledger-pending-cap.ts: refused whole, with
 * nothing stored, when a seller has no room), then every row is reported as SellerLedgerService.report stores
 * one, in order. One refused row (an AppError, e.g. an unknown endpoint) does not fail the others: it gets
 * outcome `rejected` with its error code. Any other error still fails the request. It authorizes nothing: the
 * caller has already checked who may report.
 */
import { AppError } from '../../errors/app-error.js';
import { ledgerTxKey, type LedgerReportBody } from '../../../shared/ledger-report-schema.js';
import type { LedgerBatchResult } from '../../../shared/api-responses/seller-ledger-responses.js';
import type { LedgerPendingCap } from './ledger-pending-cap.js';
import type { SellerLedgerService } from './seller-ledger-service.js';
import type { SellerRow } from '../seller-views.js';

export async function reportLedgerBatch(
  ledger: Pick<SellerLedgerService, 'report'>,
  cap: Pick<LedgerPendingCap, 'admit'>,
  rows: readonly LedgerReportBody[],
  sellerOf: (row: LedgerReportBody) => Promise<SellerRow>,
): Promise<LedgerBatchResult['results']> {
  const sellers: Array<SellerRow | AppError> = [];
  for (const row of rows) sellers.push(await sellerOf(row).catch(refusedRow));
  await cap.admit(
    rows.flatMap((row, i) => {
      const seller = sellers[i]!;
      return seller instanceof AppError ? [] : [{ seller, row }];
    }),
  );
  const results: LedgerBatchResult['results'] = [];
  for (const [i, row] of rows.entries()) {
    try {
      const seller = sellers[i]!;
      if (seller instanceof AppError) throw seller;
      const result = await ledger.report(seller, row);
      results.push({
        tx_hash: ledgerTxKey(row),
        outcome: result.created ? 'created' : 'duplicate',
        status: result.entry.status,
        reason: result.entry.reason,
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ tx_hash: ledgerTxKey(row), outcome: 'rejected', error_code: err.code });
    }
  }
  return results;
}

/** A row whose seller cannot be found is refused alone; any other failure fails the request. */
function refusedRow(err: unknown): AppError {
  if (err instanceof AppError) return err;
  throw err;
}

/**
 * Stores a batch of ledger rows as POST /v1/ledger/batch (a service PAT's seller) and POST
 * /v1/gate/ledger/batch (each row's seller by endpoint) both answer it: every row is reported as
 * SellerLedgerService.report stores one, in order, and one refused row (an AppError, e.g. an unknown
 * endpoint) does not fail the others: it gets outcome `rejected` with its error code. Any other error
 * still fails the request. It authorizes nothing: the caller has already checked who may report.
 */
import { AppError } from '../errors/app-error.js';
import type { LedgerReportBody } from '../../shared/ledger-report-schema.js';
import type { LedgerBatchResult } from '../../shared/api-responses/seller-ledger-responses.js';
import type { SellerLedgerService } from './seller-ledger-service.js';
import type { SellerRow } from './seller-views.js';

export async function reportLedgerBatch(
  ledger: Pick<SellerLedgerService, 'report'>,
  rows: readonly LedgerReportBody[],
  sellerOf: (row: LedgerReportBody) => Promise<SellerRow>,
): Promise<LedgerBatchResult['results']> {
  const results: LedgerBatchResult['results'] = [];
  for (const row of rows) {
    try {
      const result = await ledger.report(await sellerOf(row), row);
      results.push({
        tx_hash: row.tx_hash.toLowerCase(),
        outcome: result.created ? 'created' : 'duplicate',
        status: result.entry.status,
        reason: result.entry.reason,
      });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ tx_hash: row.tx_hash.toLowerCase(), outcome: 'rejected', error_code: err.code });
    }
  }
  return results;
}

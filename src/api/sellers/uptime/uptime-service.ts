/**
 * A gate's uptime report (docs/gate.md#uptime), for the account of its gate PAT: each bucket is stored when its
 * endpoint is a managed-proxy (`mpp`) endpoint of that account and its hour lies in the accepted window (the
 * last 48 hours, up to 5 minutes ahead for clock skew); any other bucket is refused with its reason, the rest
 * stored. Buckets of one endpoint and hour in one report are added together first, each sum capped at the
 * table's bound (MAX_HOUR_COUNT, as the store caps an hour it adds to); the reply has one outcome for each (as
 * the ledger batches answer).
 *
 * Defends: a gate reporting for another account's endpoints or for a middleware (`x402`) seller
 * (`endpoint_not_found`, as for an endpoint that does not exist); late or future hours rewriting history
 * (`uptime_hour_out_of_window`); a report whose buckets of one hour add up past the table's bound failing
 * the insert (PostgreSQL checks the proposed row before ON CONFLICT, so the store's LEAST alone does not cap
 * it). Does not defend: false counts for the gate's own endpoints — the gate is the seller's
 * process (docs/security-model.md#uptime-as-reported-by-the-sellers-gate).
 */
import type { UptimeBucket, UptimeReportReply } from '../../../shared/uptime-report-schema.js';
import { MAX_HOUR_COUNT, type PgUptimeStore, type UptimeHourRow } from './uptime-store.js';

const HOUR_MS = 3_600_000;
export const UPTIME_WINDOW_MS = 48 * HOUR_MS;
const SKEW_MS = 5 * 60_000;

export interface UptimeServiceDeps {
  store: Pick<PgUptimeStore, 'managedEndpointsOf' | 'add'>;
  now: () => Date;
}

type Result = UptimeReportReply['results'][number];

/** The buckets of one report, one row per endpoint and hour, each count capped at MAX_HOUR_COUNT. */
function merged(buckets: readonly UptimeBucket[]): UptimeHourRow[] {
  const byKey = new Map<string, UptimeHourRow>();
  for (const b of buckets) {
    const hour = new Date(b.hour);
    const key = `${b.endpoint_id} ${hour.getTime()}`;
    const row = byKey.get(key);
    if (row) {
      row.answered = Math.min(row.answered + b.answered, MAX_HOUR_COUNT);
      row.failed = Math.min(row.failed + b.failed, MAX_HOUR_COUNT);
    } else
      byKey.set(key, {
        endpoint_id: b.endpoint_id,
        hour,
        answered: Math.min(b.answered, MAX_HOUR_COUNT),
        failed: Math.min(b.failed, MAX_HOUR_COUNT),
      });
  }
  return [...byKey.values()];
}

export class UptimeService {
  constructor(private readonly deps: UptimeServiceDeps) {}

  async report(accountId: string, buckets: readonly UptimeBucket[]): Promise<UptimeReportReply> {
    const rows = merged(buckets);
    const owned = await this.deps.store.managedEndpointsOf(accountId, [...new Set(rows.map((r) => r.endpoint_id))]);
    const now = this.deps.now().getTime();
    const results: Result[] = [];
    const stored: UptimeHourRow[] = [];
    for (const row of rows) {
      const at = row.hour.getTime();
      const error_code = !owned.has(row.endpoint_id)
        ? 'endpoint_not_found'
        : at < now - UPTIME_WINDOW_MS || at > now + SKEW_MS
          ? 'uptime_hour_out_of_window'
          : undefined;
      const where = { endpoint_id: row.endpoint_id, hour: row.hour.toISOString() };
      if (error_code) results.push({ ...where, outcome: 'refused', error_code });
      else {
        stored.push(row);
        results.push({ ...where, outcome: 'stored' });
      }
    }
    await this.deps.store.add(stored);
    return { results };
  }
}

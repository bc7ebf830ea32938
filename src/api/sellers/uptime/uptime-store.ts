/**
 * Where gate uptime reports live (migrations/20261130110000_endpoint_uptime_hours.ts): which of a set of
 * endpoints are managed-proxy (`mpp`) endpoints of an account (the only ones its gate may report for), adding a
 * report's hourly counts (capped at the table's bound), and one seller's counts since an hour.
 *
 * Defends: a gate adding counts to another account's endpoints (the ownership read is by account and protocol,
 * in one statement); counts past the table's bound failing the insert (LEAST keeps the cap). Does not defend:
 * counts that are false (the gate is the seller's).
 */
import type { Knex } from 'knex';

/** The most one hour may count of each kind (the table's CHECK). */
export const MAX_HOUR_COUNT = 10_000_000;

export interface UptimeHourRow {
  endpoint_id: string;
  hour: Date;
  answered: number;
  failed: number;
}

export interface EndpointUptimeTotals {
  endpoint_id: string;
  answered: number;
  failed: number;
}

export class PgUptimeStore {
  constructor(private readonly knex: Knex) {}

  /** Those of `endpointIds` that belong to an `mpp` seller of `accountId`. */
  async managedEndpointsOf(accountId: string, endpointIds: readonly string[]): Promise<Set<string>> {
    if (endpointIds.length === 0) return new Set();
    const rows = (await this.knex('endpoints as e')
      .join('sellers as s', 's.id', 'e.seller_id')
      .where({ 's.account_id': accountId, 's.protocol': 'mpp' })
      .whereIn('e.id', [...endpointIds])
      .select('e.id')) as Array<{ id: string }>;
    return new Set(rows.map((r) => r.id));
  }

  /** Adds each row's counts to its endpoint's hour (one row per endpoint and hour in `rows`). */
  async add(rows: readonly UptimeHourRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.knex.raw(
      `INSERT INTO endpoint_uptime_hours AS t (endpoint_id, hour, answered, failed)
       SELECT * FROM unnest(?::varchar[], ?::timestamptz[], ?::int[], ?::int[])
       ON CONFLICT (endpoint_id, hour) DO UPDATE
         SET answered = LEAST(t.answered + excluded.answered, ${MAX_HOUR_COUNT}),
             failed = LEAST(t.failed + excluded.failed, ${MAX_HOUR_COUNT}),
             updated_at = now()`,
      [
        rows.map((r) => r.endpoint_id),
        rows.map((r) => r.hour.toISOString()),
        rows.map((r) => r.answered),
        rows.map((r) => r.failed),
      ],
    );
  }

  /** Each endpoint of `sellerId` with counts since `since`, summed. */
  async totalsOfSeller(sellerId: string, since: Date): Promise<EndpointUptimeTotals[]> {
    const result = await this.knex.raw(
      `SELECT u.endpoint_id, sum(u.answered)::bigint AS answered, sum(u.failed)::bigint AS failed
         FROM endpoint_uptime_hours u JOIN endpoints e ON e.id = u.endpoint_id
        WHERE e.seller_id = ? AND u.hour >= ?
        GROUP BY u.endpoint_id`,
      [sellerId, since.toISOString()],
    );
    return (result as { rows: Array<{ endpoint_id: string; answered: string; failed: string }> }).rows.map((r) => ({
      endpoint_id: r.endpoint_id,
      answered: Number(r.answered),
      failed: Number(r.failed),
    }));
  }
}

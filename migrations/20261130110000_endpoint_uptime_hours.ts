/**
 * Uptime as a seller's gate sees it (docs/gate.md#uptime): per endpoint and UTC hour, how many proxied requests
 * the origin answered (any status below 500) and how many it failed (5xx, unreachable, timed out), as the gate
 * reports them (`POST /v1/gate/uptime`). Reports add to the hour's counts. The public catalogue shows the 30-day
 * ratio (src/api/discovery/).
 *
 * CHECK endpoint_uptime_hours_bounded: counts are non-negative, at most 10,000,000 per hour each (an upsert
 * beyond that keeps the cap: LEAST in the statement), and `hour` is on the hour. Rows go with their endpoint.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE endpoint_uptime_hours (
      endpoint_id varchar(40) NOT NULL REFERENCES endpoints(id) ON DELETE CASCADE,
      hour timestamptz NOT NULL,
      answered integer NOT NULL,
      failed integer NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (endpoint_id, hour),
      CONSTRAINT endpoint_uptime_hours_bounded CHECK (
        answered >= 0 AND answered <= 10000000 AND failed >= 0 AND failed <= 10000000
        AND date_trunc('hour', hour AT TIME ZONE 'UTC') = hour AT TIME ZONE 'UTC'
      )
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE endpoint_uptime_hours');
}

/**
 * Rate limits shared by every API process (src/api/http/middleware/rate-limit.ts): the counters of
 * rate-limiter-flexible's PostgreSQL store, in the layout it expects (key, points, expire in ms since the
 * epoch), created here so that the schema belongs to the migrations and the API never creates tables.
 * UNLOGGED: a counter is written on nearly every request and needs no crash safety; after a PostgreSQL
 * crash (or on a promoted standby, which has no copy) the counts start over, at worst one window of extra
 * requests. fillfactor 70 leaves room for the in-place (HOT) updates of each window's count.
 *
 * Also indexes identity_nonces for the purge of used and expired sign-in nonces that runs with each issue
 * (src/api/services/identity-service.ts), so it reads the dead rows only.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE UNLOGGED TABLE rate_limits (
    key varchar(255) PRIMARY KEY,
    points integer NOT NULL DEFAULT 0,
    expire bigint
  ) WITH (fillfactor = 70)`);
  await knex.raw('CREATE INDEX identity_nonces_expires_at_index ON identity_nonces (expires_at)');
  await knex.raw('CREATE INDEX identity_nonces_used_index ON identity_nonces (used_at) WHERE used_at IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX identity_nonces_used_index');
  await knex.raw('DROP INDEX identity_nonces_expires_at_index');
  await knex.raw('DROP TABLE rate_limits');
}

/**
 * How the pay tables are stored: ANALYZE skips the payload columns (their statistics were most of its cost)
 * and keeps the statistics of the columns queries look rows up by; authorizations pages leave room for the
 * signature update, so that it stays on its page (a HOT update, no new index entries).
 */
import assert from 'node:assert/strict';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('pay table storage', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  it('ANALYZE keeps statistics for chain_key and seq and none for the payload and hashes', async () => {
    await db.knex.raw(`
      INSERT INTO audit_events (chain_key, seq, event_type, actor, payload, prev_hash, hash, created_at)
      SELECT 'w_' || c, s, 'payment.reserved', 'agent', jsonb_build_object('n', s),
             CASE WHEN s = 1 THEN repeat('0', 64) ELSE md5(c || '-' || (s - 1)) || md5(c || '-' || (s - 1)) END,
             md5(c || '-' || s) || md5(c || '-' || s), now()
        FROM generate_series(1, 20) c, generate_series(1, 20) s`);
    await db.knex.raw('ANALYZE audit_events');
    const rows = (await db.knex.raw(`SELECT attname FROM pg_stats WHERE tablename = 'audit_events' ORDER BY attname`))
      .rows as Array<{ attname: string }>;
    const analyzed = rows.map((r) => r.attname);
    for (const column of ['chain_key', 'seq', 'event_type'])
      assert.ok(analyzed.includes(column), `${column} has statistics: ${analyzed.join(', ')}`);
    for (const column of ['payload', 'prev_hash', 'hash'])
      assert.ok(!analyzed.includes(column), `${column} has no statistics`);
  });

  it('the same holds for authorizations and policy_decisions', async () => {
    const rows = (
      await db.knex.raw(
        `SELECT c.relname AS table, a.attname AS column, a.attstattarget AS target FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relname IN ('authorizations', 'policy_decisions') AND a.attnum > 0 AND NOT a.attisdropped`,
      )
    ).rows as Array<{ table: string; column: string; target: number | null }>;
    const target = (table: string, column: string) =>
      rows.find((r) => r.table === table && r.column === column)?.target;
    for (const [table, column] of [
      ['authorizations', 'response'],
      ['authorizations', 'signature'],
      ['authorizations', 'request_hash'],
      ['policy_decisions', 'violations'],
      ['policy_decisions', 'headroom'],
    ] as const) {
      assert.equal(target(table, column), 0, `${table}.${column} is skipped by ANALYZE`);
    }
    for (const [table, column] of [
      ['authorizations', 'wallet_id'],
      ['authorizations', 'nonce'],
      ['policy_decisions', 'wallet_id'],
    ] as const) {
      assert.notEqual(target(table, column), 0, `${table}.${column} keeps its statistics`);
    }
  });

  it('every other column of the pay tables is sampled with a statistics target of 10 (3,000 rows per ANALYZE)', async () => {
    const rows = (
      await db.knex.raw(
        `SELECT c.relname AS table, a.attname AS column, a.attstattarget AS target FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relname IN ('authorizations', 'audit_events', 'policy_decisions') AND a.attnum > 0 AND NOT a.attisdropped`,
      )
    ).rows as Array<{ table: string; column: string; target: number | null }>;
    const analyzed = rows.filter((r) => r.target !== 0);
    assert.ok(analyzed.length >= 20, `analyzed columns: ${analyzed.length}`);
    for (const r of analyzed) assert.equal(r.target, 10, `${r.table}.${r.column} has target 10`);
    // Its statistics are sized by the target: ten histogram buckets.
    await db.knex.raw(`
      INSERT INTO audit_events (chain_key, seq, event_type, actor, payload, prev_hash, hash, created_at)
      SELECT 'sample_' || c, s, 'payment.reserved', 'agent', '{}'::jsonb, repeat('0', 64), md5(c || '-' || s) || md5(c || '-' || s), now()
        FROM generate_series(1, 100) c, generate_series(1, 100) s`);
    await db.knex.raw('ANALYZE audit_events');
    const stats = (
      await db.knex.raw(
        `SELECT array_length(histogram_bounds::text::text[], 1) AS buckets FROM pg_stats WHERE tablename = 'audit_events' AND attname = 'chain_key'`,
      )
    ).rows[0] as { buckets: number };
    // (With the default target the histogram of these 100+ equally common keys would have about 100 bounds.)
    assert.ok(stats.buckets > 1 && stats.buckets <= 11, `chain_key histogram has at most 11 bounds: ${stats.buckets}`);
  });

  it('a signature record stays on its page: authorizations pages are filled to 75 %', async () => {
    const row = (await db.knex.raw(`SELECT reloptions FROM pg_class WHERE relname = 'authorizations'`)).rows[0] as {
      reloptions: string[] | null;
    };
    assert.deepEqual(row.reloptions, ['fillfactor=75']);
  });

  it('the Idempotency-Key index holds only rows that have a key, and a lookup by key uses it', async () => {
    const def = (
      await db.knex.raw(
        `SELECT indexdef FROM pg_indexes WHERE indexname = 'authorizations_wallet_id_idempotency_key_unique'`,
      )
    ).rows[0] as { indexdef: string };
    assert.match(def.indexdef, /UNIQUE INDEX .* \(wallet_id, idempotency_key\) WHERE \(idempotency_key IS NOT NULL\)/);
    const plan = (
      await db.knex.raw(`EXPLAIN SELECT id FROM authorizations WHERE wallet_id = 'w_1' AND idempotency_key = 'k'`)
    ).rows
      .map((r: Record<string, string>) => r['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /authorizations_wallet_id_idempotency_key_unique/, plan);
  });
});

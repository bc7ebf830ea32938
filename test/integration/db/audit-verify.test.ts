/**
 * The audit ledger's verification reads the ledger in bounded pages: a ledger longer than one page verifies
 * whole, the first broken row is named wherever it lies (inside a page, on a page's edge, at a chain's start),
 * and no query returns more than a page.
 */
import assert from 'node:assert/strict';
import { appendAuditEvent, verifyAuditChain } from '../../../src/audit/audit-ledger.js';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('audit ledger verification in pages', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));
  // TRUNCATE fires no row trigger: each test starts from an empty ledger.
  beforeEach(() => db.knex.raw('TRUNCATE audit_events'));

  /** Three chains of 4, 5 and 3 rows (12 in all), appended interleaved as a running service would. */
  async function seed(): Promise<void> {
    const lengths: Record<string, number> = { wal_a: 4, wal_b: 5, wal_c: 3 };
    for (let round = 0; round < 5; round++) {
      for (const [chainKey, length] of Object.entries(lengths)) {
        if (round >= length) continue;
        await db.knex.transaction((trx) => appendAuditEvent(trx, { chainKey, eventType: 'payment.signed', actor: 'agent', payload: { round } }));
      }
    }
  }

  /** Runs `change` with the append-only trigger off, as only someone who owns the database could. */
  async function tamper(change: () => Promise<unknown>): Promise<void> {
    await db.knex.raw('ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update');
    try {
      await change();
    } finally {
      await db.knex.raw('ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update');
    }
  }

  const rowOf = async (chainKey: string, seq: number) => (await db.knex('audit_events').where({ chain_key: chainKey, seq }).first('id')) as { id: string };

  it('verifies a ledger longer than one page, in every page size, without any query returning more than a page', async () => {
    await seed();
    for (const batchRows of [1, 2, 5, 12, 13, 5_000]) {
      const largest: number[] = [];
      const onResponse = (response: unknown) => {
        if (Array.isArray(response)) largest.push(response.length);
      };
      db.knex.on('query-response', onResponse);
      try {
        assert.deepEqual(await verifyAuditChain(db.knex, undefined, { batchRows }), { chains: 3, rows: 12, ok: true }, `pages of ${batchRows}`);
      } finally {
        db.knex.off('query-response', onResponse);
      }
      assert.ok(Math.max(...largest) <= batchRows, `pages of ${batchRows}: at most ${batchRows} rows per query, got ${Math.max(...largest)}`);
      assert.ok(largest.length >= Math.ceil(12 / batchRows), `pages of ${batchRows}: ${largest.length} queries`);
    }
    assert.deepEqual(await verifyAuditChain(db.knex, 'wal_b', { batchRows: 2 }), { chains: 1, rows: 5, ok: true });
  });

  it('names the first tampered row, also when it lies in a later page', async () => {
    await seed();
    const target = await rowOf('wal_c', 2);
    await tamper(() => db.knex('audit_events').where({ id: target.id }).update({ actor: 'mallory' }));
    for (const batchRows of [2, 3, 5_000]) {
      const result = await verifyAuditChain(db.knex, undefined, { batchRows });
      assert.equal(result.ok, false);
      assert.deepEqual(result.firstBroken, { id: String(target.id), chain_key: 'wal_c', seq: 2, reason: 'hash_mismatch' });
      // wal_a (4) and wal_b (5) were read whole, then wal_c up to its second row.
      assert.equal(result.rows, 11);
      assert.equal(result.chains, 3);
    }
    assert.equal((await verifyAuditChain(db.knex, 'wal_a', { batchRows: 2 })).ok, true, 'an intact chain still verifies alone');
  });

  it('names a deleted row as a gap, on a page edge and at the start of a chain', async () => {
    await seed();
    // wal_b's first row is gone: its chain starts at seq 2.
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_b', seq: 1 }).delete());
    const next = await rowOf('wal_b', 2);
    const result = await verifyAuditChain(db.knex, undefined, { batchRows: 3 });
    assert.deepEqual(result.firstBroken, { id: String(next.id), chain_key: 'wal_b', seq: 2, reason: 'sequence_gap' });
    assert.equal(result.rows, 5);

    // wal_a's third row is gone: with pages of 2 rows, its fourth opens the second page.
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_a', seq: 3 }).delete());
    const after = await rowOf('wal_a', 4);
    const first = await verifyAuditChain(db.knex, undefined, { batchRows: 2 });
    assert.deepEqual(first.firstBroken, { id: String(after.id), chain_key: 'wal_a', seq: 4, reason: 'sequence_gap' }, 'the earlier break in (chain, seq) order is the one named');
  });

  it('names a row whose link to the previous one was rewritten', async () => {
    await seed();
    const target = await rowOf('wal_b', 3);
    await tamper(() => db.knex('audit_events').where({ id: target.id }).update({ prev_hash: 'f'.repeat(64) }));
    const result = await verifyAuditChain(db.knex, 'wal_b', { batchRows: 2 });
    assert.deepEqual(result.firstBroken, { id: String(target.id), chain_key: 'wal_b', seq: 3, reason: 'prev_hash_mismatch' });
  });
});

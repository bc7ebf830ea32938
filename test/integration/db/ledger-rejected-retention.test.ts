/**
 * Rejected ledger rows past their retention leave the database (src/api/sellers/ledger/rejected-ledger-sweeper.ts,
 * src/api/sellers/store/pg-rejected-ledger-retention.ts, migration 20261203100000), against real PostgreSQL:
 * - rejected rows reported before the cutoff (retention days before now) go, in batches, every seller's; rejected
 *   rows at or after it stay, and so do pending and verified rows however old;
 * - the daily rollups are unchanged: seller_unverified_days (the revenue summary's `rejected` days) and
 *   seller_revenue_days, bucket by bucket — while any other delete of a rejected row still takes it out of its day
 *   (the retention switch is the sweep's transaction's own);
 * - a run takes at most `rounds` batches of `batch` rows (the rest waits for the next run), and a row another
 *   transaction holds (a pay-to proof reopening it) is skipped, then deleted by a later run;
 * - `treasury_ledger_rejected_deleted_total` counts the rows deleted;
 * - the migration's down restores the trigger as it was (the retention switch no longer keeps a row's day) and drops
 *   the index; up again brings both back.
 */
import assert from 'node:assert/strict';
import type { Knex } from '../../../src/api/db/knex-client.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { rejectedLedgerSweeper } from '../../../src/api/sellers/ledger/rejected-ledger-sweeper.js';
import { useTestDatabase, useTestDatabaseBefore, type TestDatabase } from '../../support/test-database.js';
import { insertAccountAndSeller } from '../../support/migration-fixtures.js';

const PAYER = '0x857b06519e91e3a54538791bdbb0e22373e36b66';
const NOW = new Date('2026-12-31T12:00:00Z');
const RETENTION_DAYS = 30;
const CUTOFF = new Date(NOW.getTime() - RETENTION_DAYS * 86_400_000);
const daysBefore = (days: number, ms = 0) => new Date(NOW.getTime() - days * 86_400_000 - ms);

let n = 0;
/** A ledger row of `seller` with `status`, reported at `at`. */
const row = (seller: string, status: string, at: Date, amount = 100) => ({
  id: `led_${String(++n).padStart(6, '0')}`,
  seller_id: seller,
  endpoint_id: null,
  tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
  payer: PAYER,
  amount_micro: String(amount + n),
  network: 'eip155:84532',
  payout_mode: 'direct',
  status,
  reason: status === 'rejected' ? 'transaction_not_found' : status === 'pending' ? 'awaiting_verification' : null,
  log_index: status === 'verified' ? 0 : null,
  confirmations: status === 'verified' ? 1 : null,
  verified_at: status === 'verified' ? at : null,
  created_at: at,
});

/** Every bucket of both daily rollups, as text, ordered. */
async function rollups(knex: Knex) {
  const unverified = await knex('seller_unverified_days')
    .orderBy(['seller_id', 'day', 'endpoint_key', 'status'])
    .select('seller_id', knex.raw('day::text AS day'), 'endpoint_key', 'status', 'total_micro', 'entries');
  const revenue = await knex('seller_revenue_days')
    .orderBy(['seller_id', 'day', 'endpoint_key'])
    .select('*', knex.raw('day::text AS day_text'));
  return {
    unverified: unverified.map((r) => Object.values(r).map(String).join(' ')),
    revenue: revenue.map((r) => JSON.stringify(r)),
  };
}

/** The ids of the rows still stored, by status. */
async function idsBy(knex: Knex, status: string): Promise<string[]> {
  return (await knex('ledger_entries').where({ status }).orderBy('id').pluck('id')) as string[];
}

describe('rejected ledger rows: retention (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  it('deletes rejected rows past the retention in bounded batches; the rollups and every other row stay', async () => {
    const { knex } = db;
    await insertAccountAndSeller(knex, NOW);
    await knex('sellers').insert({
      id: 'sel_b',
      account_id: 'acc_a',
      name: 'b',
      slug: 'b',
      created_at: NOW,
      updated_at: NOW,
    });

    // Old rejected rows of two sellers over several days; one exactly at the cutoff and younger ones; old rows of
    // every other status.
    const old = [
      ...[31, 31, 35, 40, 40, 90, 400].map((d, i) => row('sel_a', 'rejected', daysBefore(d, i * 1_000))),
      ...[31, 45, 60].map((d) => row('sel_b', 'rejected', daysBefore(d))),
    ];
    const stays = [
      row('sel_a', 'rejected', CUTOFF),
      row('sel_a', 'rejected', daysBefore(29)),
      row('sel_b', 'rejected', daysBefore(1)),
      row('sel_a', 'pending', daysBefore(60)),
      row('sel_b', 'verified', daysBefore(60)),
      row('sel_a', 'verified', daysBefore(400)),
    ];
    await knex('ledger_entries').insert([...old, ...stays]);
    const before = await rollups(knex);
    assert.ok(
      before.unverified.some((b) => b.includes('rejected')),
      'the rollup counts the rejected rows',
    );

    const metrics = createTreasuryMetrics();
    const deleted = async () => (await metrics.ledgerRejectedDeleted.get()).values[0]?.value ?? 0;
    const sweeper = (o: { batch: number; rounds: number }) =>
      rejectedLedgerSweeper(knex, metrics, { retentionDays: RETENTION_DAYS, ...o }, () => NOW);

    // One run takes at most rounds × batch rows, the oldest first, whichever seller reported them.
    assert.deepEqual(await sweeper({ batch: 2, rounds: 2 }).sweep(), { deleted: 4 });
    const oldest = [...old].sort((a, b) => a.created_at.getTime() - b.created_at.getTime()).slice(0, 4);
    const rejectedLeft = await idsBy(knex, 'rejected');
    assert.equal(rejectedLeft.length, old.length + 3 - 4);
    assert.ok(oldest.every((r) => !rejectedLeft.includes(r.id)));
    assert.ok(oldest.some((r) => r.seller_id === 'sel_b') && oldest.some((r) => r.seller_id === 'sel_a'));

    // A row another transaction holds (a pay-to proof reopening it) is skipped, not waited for.
    const held = old[0]!.id;
    const trx = await knex.transaction();
    try {
      await trx('ledger_entries').where({ id: held }).forUpdate().select('id');
      assert.deepEqual(await sweeper({ batch: 2, rounds: 100 }).sweep(), { deleted: old.length - 4 - 1 });
    } finally {
      await trx.commit();
    }
    assert.deepEqual(await idsBy(knex, 'rejected'), [held, ...stays.slice(0, 3).map((r) => r.id)].sort());
    assert.deepEqual(await sweeper({ batch: 2, rounds: 100 }).sweep(), { deleted: 1 });
    assert.deepEqual(await sweeper({ batch: 2, rounds: 100 }).sweep(), { deleted: 0 });
    assert.equal(await deleted(), old.length);

    // Everything but the old rejected rows is still there; the rollups are as they were, bucket by bucket.
    assert.deepEqual(
      (await knex('ledger_entries').orderBy('id').pluck('id')) as string[],
      stays.map((r) => r.id),
    );
    assert.deepEqual(await rollups(knex), before);

    // Any other delete of a rejected row still takes it out of its day: the switch was the sweep's transaction's.
    const young = stays[1]!;
    const bucket = () =>
      knex('seller_unverified_days')
        .where({ seller_id: 'sel_a', status: 'rejected', day: young.created_at.toISOString().slice(0, 10) })
        .first('entries', 'total_micro');
    const inBucket = await bucket();
    await knex('ledger_entries').where({ id: young.id }).del();
    assert.deepEqual(await bucket(), {
      entries: String(Number(inBucket.entries) - 1),
      total_micro: String(Number(inBucket.total_micro) - Number(young.amount_micro)),
    });
  });

  it('refuses a retention, batch or rounds out of bounds', () => {
    const metrics = createTreasuryMetrics();
    for (const o of [
      { retentionDays: 1 },
      { retentionDays: 3_651 },
      { retentionDays: 30, batch: 0 },
      { retentionDays: 30, rounds: 1.5 },
    ])
      assert.throws(() => rejectedLedgerSweeper(db.knex, metrics, o), RangeError, JSON.stringify(o));
  });
});

describe('migration 20261203100000 (rejected rows retention): up, down, up', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore('20261203100000_ledger_rejected_retention.ts');

  it('keeps a day under the retention switch only while it is up', async () => {
    const { knex } = db;
    await insertAccountAndSeller(knex, NOW);
    const index = async () =>
      (await knex('pg_indexes').where({ indexname: 'ledger_entries_rejected_age' }).count({ n: '*' }))[0]!.n;
    /** Deletes a new rejected row under the switch; answers what its day's bucket holds after. */
    const deletedUnderSwitch = async () => {
      const r = row('sel_a', 'rejected', daysBefore(100));
      await knex('ledger_entries').insert(r);
      await knex.transaction(async (trx) => {
        await trx.raw(`SELECT set_config('treasury.ledger_retention', 'on', true)`);
        await trx('ledger_entries').where({ id: r.id }).del();
      });
      const bucket = await knex('seller_unverified_days')
        .where({ seller_id: 'sel_a', status: 'rejected', day: r.created_at.toISOString().slice(0, 10) })
        .first('entries');
      return Number(bucket.entries);
    };
    assert.equal(Number(await index()), 0);
    assert.equal(await deletedUnderSwitch(), 0, 'before: the day loses the row');
    await knex.migrate.up();
    assert.equal(Number(await index()), 1);
    assert.equal(await deletedUnderSwitch(), 1, 'up: the day keeps the row');
    await knex.migrate.down();
    assert.equal(Number(await index()), 0);
    assert.equal(await deletedUnderSwitch(), 1, 'down: the day loses the next row');
    await knex.migrate.up();
    assert.equal(await deletedUnderSwitch(), 2, 'up again: the day keeps it');
  });
});

/**
 * The seller ledger rollups on a database that already holds a seller history. Migration 20261125160000
 * (seller_payables) backfills each seller's platform_mor ledger rows and flushes exactly once (direct-mode
 * rows never), rows inserted afterwards are counted by its triggers, and it rolls back and forward again;
 * migration 20261125170000 (seller_revenue_days) backfills each seller's revenue per UTC day from the same
 * history; migration 20261125200400 (ledger verification) makes every row pending and rebuilds both rollups
 * to count verified rows only, keeping what was already paid out as an advance.
 */
import assert from 'node:assert/strict';
import type { Knex } from '../../../src/api/db/knex-client.js';
import { migrateUpTo, useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261125160000_seller_payables.ts';

/** Each seller's seller_payables row, by seller: its id and the named amount columns as decimal strings. */
const payableRows = async (knex: Knex, amounts: string[]) =>
  (await knex('seller_payables').orderBy('seller_id')).map((r) => [r.seller_id, ...amounts.map((a) => String(r[a]))]);

describe('seller ledger rollup migrations: payables and revenue days (PostgreSQL)', function () {
  this.timeout(60_000);
  // Every migration before seller_payables has run when the first test starts.
  const db = useTestDatabaseBefore(MIGRATION);

  it("backfills each seller's accrued payables from its history, then counts new rows; down and up again", async () => {
    const { knex } = db;
    const now = new Date();
    await knex('accounts').insert({ id: 'acct_payables', created_at: now });
    const seller = (id: string) => ({
      id,
      account_id: 'acct_payables',
      name: id,
      slug: id,
      created_at: now,
      updated_at: now,
    });
    await knex('sellers').insert([seller('sel_mor'), seller('sel_direct'), seller('sel_quiet')]);
    let n = 0;
    const entry = (sellerId: string, amount: number, mode: string) => ({
      id: `led_${++n}`,
      seller_id: sellerId,
      tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
      payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
      amount_micro: String(amount),
      network: 'eip155:84532',
      payout_mode: mode,
      created_at: now,
    });
    /** A payout flush of `amount` micro-USD to the seller, recorded now by the test. */
    const flush = (id: string, sellerId: string, amount: string) =>
      knex('payout_flushes').insert({
        id,
        seller_id: sellerId,
        amount_micro: amount,
        created_by: 'test',
        created_at: now,
      });
    await knex('ledger_entries').insert([
      entry('sel_mor', 500_000, 'platform_mor'),
      entry('sel_mor', 250_000, 'platform_mor'),
      entry('sel_mor', 90_000, 'direct'),
      entry('sel_direct', 70_000, 'direct'),
    ]);
    await flush('po_1', 'sel_mor', '500000');

    await knex.migrate.up();
    const rows = () => payableRows(knex, ['earned_micro', 'paid_micro']);
    assert.deepEqual(
      await rows(),
      [['sel_mor', '750000', '500000']],
      'direct-mode rows and sellers without history hold nothing',
    );

    await knex('ledger_entries').insert([
      entry('sel_mor', 1_000, 'platform_mor'),
      entry('sel_quiet', 2_000, 'platform_mor'),
      entry('sel_direct', 3_000, 'direct'),
    ]);
    await flush('po_2', 'sel_quiet', '2000');
    assert.deepEqual(await rows(), [
      ['sel_mor', '751000', '500000'],
      ['sel_quiet', '2000', '2000'],
    ]);
    await assert.rejects(
      flush('po_3', 'sel_direct', '1'),
      /seller_payables_paid_within_earned/,
      'nothing earned, nothing to pay',
    );

    await knex.migrate.down();
    assert.equal(await knex.schema.hasTable('seller_payables'), false);
    await knex('ledger_entries').insert(entry('sel_mor', 4_000, 'platform_mor'));
    // Up to the revenue days (20261125170000); the ledger verification migration after it is the next test's.
    await knex.migrate.up();
    await knex.migrate.up();
    assert.deepEqual(
      await rows(),
      [
        ['sel_mor', '755000', '500000'],
        ['sel_quiet', '2000', '2000'],
      ],
      'the backfill again, rows made while it was down included',
    );

    // Migration 20261125170000 (seller_revenue_days), run by the same `latest`, backfilled the revenue of every
    // row made before it, per seller, UTC day and endpoint ('' for none), as summing the rows gives.
    const days = (await knex('seller_revenue_days').orderBy(['seller_id', 'day', 'endpoint_key'])).map((r) => [
      r.seller_id,
      String(r.total_micro),
      String(r.entries),
    ]);
    const summed = (
      await knex.raw(
        `SELECT seller_id, sum(amount_micro)::text AS total, count(*)::text AS n FROM ledger_entries GROUP BY seller_id, (created_at AT TIME ZONE 'UTC')::date, COALESCE(endpoint_id, '') ORDER BY 1`,
      )
    ).rows.map((r: { seller_id: string; total: string; n: string }) => [r.seller_id, r.total, r.n]);
    assert.deepEqual(days, summed);
    assert.deepEqual(days, [
      ['sel_direct', '73000', '2'],
      ['sel_mor', '845000', '5'],
      ['sel_quiet', '2000', '1'],
    ]);
  });

  it('ledger verification (20261125200400): every row becomes pending and counts only once verified; what was paid before stays paid, covered by the first verified earnings; down and up again', async () => {
    const { knex } = db;
    const VERIFICATION = '20261125200400_ledger_verification.ts';
    await migrateUpTo(knex, VERIFICATION);
    await knex.migrate.up();
    const payables = () => payableRows(knex, ['earned_micro', 'paid_micro', 'advance_micro']);
    const statuses = (await knex('ledger_entries').distinct('status')).map((r) => r.status);
    assert.deepEqual(statuses, ['pending'], 'nothing reported before is trusted');
    assert.equal((await knex('seller_revenue_days')).length, 0, 'no revenue until verified');
    // sel_mor had earned 755,000 and was paid 500,000; sel_quiet earned and was paid 2,000.
    assert.deepEqual(await payables(), [
      ['sel_mor', '500000', '500000', '500000'],
      ['sel_quiet', '2000', '2000', '2000'],
    ]);

    const verify = (id: string) =>
      knex('ledger_entries')
        .where({ id })
        .update({ status: 'verified', reason: null, verified_at: new Date(), confirmations: 1, log_index: 0 });
    // led_1 (500,000, the row paid out by po_1) verifies: it covers the advance, nothing accrues twice.
    await verify('led_1');
    assert.deepEqual(await payables(), [
      ['sel_mor', '500000', '500000', '0'],
      ['sel_quiet', '2000', '2000', '2000'],
    ]);
    // led_2 (250,000, never paid) verifies: it accrues.
    await verify('led_2');
    assert.deepEqual((await payables())[0], ['sel_mor', '750000', '500000', '0']);
    // A direct-mode row adds revenue, not payables; a verified row is final.
    await verify('led_3');
    assert.deepEqual((await payables())[0], ['sel_mor', '750000', '500000', '0']);
    assert.deepEqual(
      (await knex('seller_revenue_days').orderBy('seller_id')).map((r) => [
        r.seller_id,
        String(r.total_micro),
        String(r.entries),
      ]),
      [['sel_mor', '840000', '3']],
    );
    await assert.rejects(
      knex('ledger_entries').where({ id: 'led_2' }).update({ status: 'rejected' }),
      /a verified ledger entry is final/,
    );
    await assert.rejects(
      knex('ledger_entries').where({ id: 'led_2' }).update({ amount_micro: '1' }),
      /a verified ledger entry is final/,
    );

    // Down: every row counts again, as before verification existed; up: all pending again, paid kept as an advance.
    await knex.migrate.down();
    assert.equal(await knex.schema.hasColumn('ledger_entries', 'status'), false);
    assert.deepEqual(
      (await knex('seller_payables').orderBy('seller_id')).map((r) => [
        r.seller_id,
        String(r.earned_micro),
        String(r.paid_micro),
      ]),
      [
        ['sel_mor', '755000', '500000'],
        ['sel_quiet', '2000', '2000'],
      ],
    );
    await knex.migrate.up();
    assert.deepEqual(await payables(), [
      ['sel_mor', '500000', '500000', '500000'],
      ['sel_quiet', '2000', '2000', '2000'],
    ]);
  });
});

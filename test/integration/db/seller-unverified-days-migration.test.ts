/**
 * Migration 20261202120000 (unverified rows per day) on a database with pending, rejected and verified ledger
 * rows: the rollup is backfilled from the unverified rows only (one row per seller, day, endpoint and status);
 * afterwards the trigger keeps it as rows are inserted, rejected, reopened, verified, moved and deleted, and a
 * lease update (next_check_at) leaves it alone; down drops the table and the trigger, up backfills again.
 */
import assert from 'node:assert/strict';
import type { Knex } from '../../../src/api/db/knex-client.js';
import { useTestDatabaseBefore } from '../../support/test-database.js';
import { insertAccountAndSeller } from '../../support/migration-fixtures.js';

const MIGRATION = '20261202120000_seller_unverified_days.ts';
const PAYER = '0x857b06519e91e3a54538791bdbb0e22373e36b66';

/** The rollup's non-empty rows, ordered, as [day, endpoint_key, status, total, entries] with amounts as text. */
const rollup = async (knex: Knex) =>
  (
    await knex('seller_unverified_days')
      .where({ seller_id: 'sel_a' })
      .andWhere('entries', '<>', 0)
      .orderBy(['day', 'endpoint_key', 'status'])
      .select('*', knex.raw('day::text AS day_text'))
  ).map((r) => [r.day_text, r.endpoint_key, r.status, String(r.total_micro), String(r.entries)]);

describe('unverified ledger rows per day migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('backfills the unverified rows, keeps them through every change, and rolls back and forward', async () => {
    const { knex } = db;
    const now = new Date();
    await insertAccountAndSeller(knex, now);
    for (const id of ['ep_a', 'ep_b'])
      await knex('endpoints').insert({
        id,
        seller_id: 'sel_a',
        slug: id,
        path: `/${id}`,
        price_micro: '1',
        created_at: now,
        updated_at: now,
      });
    let n = 0;
    const row = (amount: number, at: string, status: string, endpoint: string | null = 'ep_a') => ({
      id: `led_${++n}`,
      seller_id: 'sel_a',
      endpoint_id: endpoint,
      tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
      payer: PAYER,
      amount_micro: String(amount),
      network: 'eip155:84532',
      status,
      log_index: status === 'verified' ? 0 : null,
      created_at: new Date(at),
    });
    await knex('ledger_entries').insert([
      row(10, '2026-11-20T10:00:00Z', 'pending'),
      row(20, '2026-11-20T23:59:59.999Z', 'rejected'),
      row(30, '2026-11-20T12:00:00Z', 'rejected'),
      row(40, '2026-11-21T00:00:00Z', 'pending', null),
      row(50, '2026-11-20T11:00:00Z', 'verified'),
    ]);

    await knex.migrate.up();
    assert.deepEqual(await rollup(knex), [
      ['2026-11-20', 'ep_a', 'pending', '10', '1'],
      ['2026-11-20', 'ep_a', 'rejected', '50', '2'],
      ['2026-11-21', '', 'pending', '40', '1'],
    ]);

    await knex('ledger_entries').insert(row(6, '2026-11-21T05:00:00Z', 'pending', 'ep_b'));
    await knex('ledger_entries').where({ id: 'led_1' }).update({ status: 'rejected' });
    await knex('ledger_entries').where({ id: 'led_2' }).update({ status: 'pending' });
    await knex('ledger_entries').where({ id: 'led_4' }).update({ status: 'verified', log_index: 0 });
    await knex('ledger_entries').where({ id: 'led_6' }).update({ endpoint_id: 'ep_a', amount_micro: '7' });
    await knex('ledger_entries').where({ id: 'led_3' }).del();
    await knex('ledger_entries').update({ next_check_at: now });
    assert.deepEqual(await rollup(knex), [
      ['2026-11-20', 'ep_a', 'pending', '20', '1'],
      ['2026-11-20', 'ep_a', 'rejected', '10', '1'],
      ['2026-11-21', 'ep_a', 'pending', '7', '1'],
    ]);

    await knex.migrate.down();
    assert.equal(await knex.schema.hasTable('seller_unverified_days'), false);
    await knex('ledger_entries').insert(row(8, '2026-11-22T00:00:00Z', 'rejected'));

    await knex.migrate.up();
    assert.deepEqual(await rollup(knex), [
      ['2026-11-20', 'ep_a', 'pending', '20', '1'],
      ['2026-11-20', 'ep_a', 'rejected', '10', '1'],
      ['2026-11-21', 'ep_a', 'pending', '7', '1'],
      ['2026-11-22', 'ep_a', 'rejected', '8', '1'],
    ]);
  });
});

/**
 * Migration 20261201140000 (revenue days per network) on a database whose verified ledger rows of one seller,
 * day and endpoint were paid on several networks: the rollup is rebuilt from the verified rows, one row per
 * network, with the same totals summed over networks as before (pending rows still count nowhere); rows verified
 * afterwards — inserted verified, or pending then verified — count on their own network; a verified row's
 * network is final; down merges the networks back into one row per day and endpoint (totals kept, the trigger
 * counting as before), and up splits them again.
 */
import assert from 'node:assert/strict';
import type { Knex } from '../../../src/api/db/knex-client.js';
import { useTestDatabaseBefore } from '../../support/test-database.js';
import { insertAccountAndSeller } from '../../support/migration-fixtures.js';

const MIGRATION = '20261201140000_seller_revenue_networks.ts';
const PAYER = '0x857b06519e91e3a54538791bdbb0e22373e36b66';
const SEPOLIA = 'eip155:84532';
const BASE = 'eip155:8453';

/** The rollup's rows, ordered, as [day, endpoint_key, network?, total, entries] with amounts as text. */
const days = async (knex: Knex, withNetwork: boolean) =>
  (
    await knex('seller_revenue_days')
      .where({ seller_id: 'sel_a' })
      .orderBy(['day', 'endpoint_key', 'total_micro'])
      .select('*', knex.raw('day::text AS day_text'))
  ).map((r) => [
    r.day_text,
    r.endpoint_key,
    ...(withNetwork ? [r.network] : []),
    String(r.total_micro),
    String(r.entries),
  ]);

describe('revenue days per network migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('splits the rollup by network from the verified rows, counts new rows on theirs, and rolls back and forward', async () => {
    const { knex } = db;
    const now = new Date();
    await insertAccountAndSeller(knex, now);
    await knex('endpoints').insert({
      id: 'ep_a',
      seller_id: 'sel_a',
      slug: 'a',
      path: '/a',
      price_micro: '1',
      created_at: now,
      updated_at: now,
    });
    let n = 0;
    const row = (
      network: string,
      amount: number,
      at: string,
      status = 'verified',
      endpoint: string | null = 'ep_a',
    ) => ({
      id: `led_${++n}`,
      seller_id: 'sel_a',
      endpoint_id: endpoint,
      tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
      payer: PAYER,
      amount_micro: String(amount),
      network,
      status,
      log_index: status === 'verified' ? 0 : null,
      created_at: new Date(at),
    });
    await knex('ledger_entries').insert([
      row(SEPOLIA, 10_000, '2026-11-20T10:00:00Z'),
      row(BASE, 5_000_000, '2026-11-20T11:00:00Z'),
      row(BASE, 7, '2026-11-20T12:00:00Z'),
      row(SEPOLIA, 300, '2026-11-21T00:00:00Z', 'verified', null),
      row(BASE, 999, '2026-11-20T13:00:00Z', 'pending'),
    ]);
    const before = await days(knex, false);
    assert.deepEqual(before, [
      ['2026-11-20', 'ep_a', '5010007', '3'],
      ['2026-11-21', '', '300', '1'],
    ]);

    await knex.migrate.up();
    assert.deepEqual(await days(knex, true), [
      ['2026-11-20', 'ep_a', SEPOLIA, '10000', '1'],
      ['2026-11-20', 'ep_a', BASE, '5000007', '2'],
      ['2026-11-21', '', SEPOLIA, '300', '1'],
    ]);

    // New rows count on their own network: inserted verified, and pending then verified.
    await knex('ledger_entries').insert(row(SEPOLIA, 1, '2026-11-20T14:00:00Z'));
    await knex('ledger_entries').where({ id: 'led_5' }).update({ status: 'verified', log_index: 0 });
    assert.deepEqual(await days(knex, true), [
      ['2026-11-20', 'ep_a', SEPOLIA, '10001', '2'],
      ['2026-11-20', 'ep_a', BASE, '5001006', '3'],
      ['2026-11-21', '', SEPOLIA, '300', '1'],
    ]);
    await assert.rejects(
      knex('ledger_entries').where({ id: 'led_1' }).update({ network: BASE }),
      /a verified ledger entry is final/,
    );
    await assert.rejects(
      knex('seller_revenue_days').insert({
        seller_id: 'sel_a',
        day: '2026-11-22',
        endpoint_key: '',
        total_micro: 1,
        entries: 1,
      }),
      /null value in column "network"/,
    );

    await knex.migrate.down();
    assert.equal(await knex.schema.hasColumn('seller_revenue_days', 'network'), false);
    assert.deepEqual(await days(knex, false), [
      ['2026-11-20', 'ep_a', '5011007', '5'],
      ['2026-11-21', '', '300', '1'],
    ]);
    await knex('ledger_entries').insert(row(BASE, 2, '2026-11-21T01:00:00Z', 'verified', null));
    assert.deepEqual((await days(knex, false))[1], ['2026-11-21', '', '302', '2'], 'the trigger counts as before');

    await knex.migrate.up();
    assert.deepEqual(await days(knex, true), [
      ['2026-11-20', 'ep_a', SEPOLIA, '10001', '2'],
      ['2026-11-20', 'ep_a', BASE, '5001006', '3'],
      ['2026-11-21', '', BASE, '2', '1'],
      ['2026-11-21', '', SEPOLIA, '300', '1'],
    ]);
  });
});

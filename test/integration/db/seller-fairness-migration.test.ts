/**
 * Migration 20261128150000 (seller fairness) on a database that already holds a seller with endpoints:
 * `sellers.endpoints_version` starts at 0 and moves once per statement that inserts, updates or deletes any of
 * the seller's endpoints (a statement of several rows counts once), never for another seller's; the verifier's
 * per-seller pending index exists; it rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261128150000_seller_fairness.ts';

describe('seller fairness migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('counts changes to a seller’s endpoints per statement, and rolls back and forward', async () => {
    const { knex } = db;
    const now = new Date();
    await knex('accounts').insert({ id: 'acc_a', created_at: now });
    const seller = (id: string) => ({ id, account_id: 'acc_a', name: id, slug: id, created_at: now, updated_at: now });
    await knex('sellers').insert([seller('sel_a'), seller('sel_b')]);
    const endpoint = (id: string, sellerId: string, path: string) => ({
      id,
      seller_id: sellerId,
      slug: id,
      path,
      price_micro: '1',
      created_at: now,
      updated_at: now,
    });
    await knex('endpoints').insert(endpoint('ep_old', 'sel_a', '/old'));

    await knex.migrate.up();
    const version = async (id: string) =>
      Number((await knex('sellers').where({ id }).first('endpoints_version')).endpoints_version);
    assert.deepEqual([await version('sel_a'), await version('sel_b')], [0, 0]);
    await knex('endpoints').insert([endpoint('ep_1', 'sel_a', '/1'), endpoint('ep_2', 'sel_a', '/2')]);
    assert.equal(await version('sel_a'), 1, 'one statement of two rows');
    await knex('endpoints').where({ seller_id: 'sel_a' }).update({ price_micro: '2' });
    assert.equal(await version('sel_a'), 2);
    await knex('endpoints').where({ id: 'ep_none' }).update({ price_micro: '3' });
    assert.equal(await version('sel_a'), 2, 'a statement that changes nothing moves nothing');
    await knex('endpoints').where({ id: 'ep_2' }).delete();
    assert.equal(await version('sel_a'), 3);
    assert.equal(await version('sel_b'), 0, "another seller's version stays");
    const indexes = await knex.raw(`SELECT 1 FROM pg_indexes WHERE indexname = 'ledger_entries_pending_by_seller'`);
    assert.equal(indexes.rows.length, 1);

    await knex.migrate.down();
    assert.ok(!(await knex.schema.hasColumn('sellers', 'endpoints_version')));
    await knex('endpoints').insert(endpoint('ep_3', 'sel_a', '/3'));
    await knex.migrate.up();
    assert.equal(await version('sel_a'), 0);
  });
});

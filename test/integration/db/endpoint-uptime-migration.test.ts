/**
 * Migration 20261130110000 (endpoint uptime hours): the table refuses negative or oversize counts and an hour
 * that is not on the UTC hour, one row per endpoint and hour, rows go with their endpoint; it rolls back and
 * forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';
import { insertAccountAndSeller } from '../../support/migration-fixtures.js';

const MIGRATION = '20261130110000_endpoint_uptime_hours.ts';

describe('endpoint uptime migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('bounds the counts and the hour, keys by endpoint and hour, cascades, and rolls back and forward', async () => {
    const { knex } = db;
    const now = new Date();
    await insertAccountAndSeller(knex, now);
    const endpoint = {
      id: 'ep_a',
      seller_id: 'sel_a',
      slug: 'a',
      path: '/a',
      price_micro: '1',
      created_at: now,
      updated_at: now,
    };
    await knex('endpoints').insert(endpoint);

    await knex.migrate.up();
    const hour = '2026-11-29T13:00:00Z';
    const row = (over: Record<string, unknown>) => ({ endpoint_id: 'ep_a', hour, answered: 1, failed: 0, ...over });
    await knex('endpoint_uptime_hours').insert(row({}));
    for (const bad of [
      row({ hour: '2026-11-29T14:00:00Z', answered: -1 }),
      row({ hour: '2026-11-29T14:00:00Z', failed: 10_000_001 }),
      row({ hour: '2026-11-29T14:30:00Z' }),
      row({ hour: '2026-11-29T14:00:00+05:30' }),
      row({}),
      row({ endpoint_id: 'ep_none', hour: '2026-11-29T15:00:00Z' }),
    ])
      await assert.rejects(knex('endpoint_uptime_hours').insert(bad), `${JSON.stringify(bad)} refused`);
    await knex('endpoints').where({ id: 'ep_a' }).delete();
    assert.equal((await knex('endpoint_uptime_hours')).length, 0, 'rows go with their endpoint');

    await knex.migrate.down();
    assert.ok(!(await knex.schema.hasTable('endpoint_uptime_hours')));
    await knex.migrate.up();
    assert.ok(await knex.schema.hasTable('endpoint_uptime_hours'));
  });
});

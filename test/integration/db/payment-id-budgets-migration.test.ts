/**
 * Migration 20261202103100 (payment-identifier budgets) on a database that already holds sellers' payment ids: the
 * per-seller totals start as the rows already stored (count, and bytes of their answers' JSON text), and the
 * triggers keep them for every way a row changes — a claim, a take-over of an expired row (INSERT … ON CONFLICT DO
 * UPDATE), a completion, a release, a sweep of several rows, a seller's rows deleted with it — never moving another
 * seller's; it rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261202103100_payment_id_budgets.ts';

describe('payment-identifier budgets migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('builds the totals from the stored rows, keeps them through every write, and rolls back and forward', async () => {
    const { knex } = db;
    const now = new Date();
    const later = new Date(now.getTime() + 3_600_000);
    const past = new Date(now.getTime() - 1_000);
    await knex('accounts').insert({ id: 'acc_a', created_at: now });
    const seller = (id: string) => ({ id, account_id: 'acc_a', name: id, slug: id, created_at: now, updated_at: now });
    await knex('sellers').insert([seller('sel_a'), seller('sel_b')]);
    const answer = { status: 200, headers: { 'content-type': 'text/plain' }, body_base64: 'aGVsbG8=' };
    const row = (sellerId: string, id: string, done: boolean, expires = later) => ({
      seller_id: sellerId,
      route: '/paid',
      payment_id: id.padEnd(16, '0'),
      fingerprint: 'f'.repeat(64),
      state: done ? 'done' : 'pending',
      answer: done ? JSON.stringify(answer) : null,
      created_at: now,
      expires_at: expires,
    });
    await knex('seller_payment_ids').insert([
      row('sel_a', 'a1', true),
      row('sel_a', 'a2', false),
      row('sel_b', 'b1', true),
    ]);
    const answerBytes = Number(
      (await knex.raw(`SELECT octet_length(?::jsonb::text) AS n`, [JSON.stringify(answer)])).rows[0].n,
    );

    await knex.migrate.up();
    const totals = async (id: string) => {
      const t = await knex('seller_payment_id_totals').where({ seller_id: id }).first('id_rows', 'answer_bytes');
      return t ? [Number(t.id_rows), Number(t.answer_bytes)] : undefined;
    };
    const recount = async (id: string) => {
      const r = (
        await knex.raw(
          `SELECT count(*) AS n, COALESCE(sum(octet_length(answer::text)), 0) AS b FROM seller_payment_ids WHERE seller_id = ?`,
          [id],
        )
      ).rows[0];
      return [Number(r.n), Number(r.b)];
    };
    assert.deepEqual(await totals('sel_a'), [2, answerBytes], 'built from the stored rows');
    assert.deepEqual(await totals('sel_b'), [1, answerBytes]);

    // A claim, a completion, a take-over of an expired answer, a release, a sweep: each keeps the totals exact.
    await knex('seller_payment_ids').insert(row('sel_a', 'a3', false));
    await knex('seller_payment_ids')
      .where({ seller_id: 'sel_a', payment_id: 'a3'.padEnd(16, '0') })
      .update({ state: 'done', answer: JSON.stringify(answer) });
    assert.deepEqual(await totals('sel_a'), await recount('sel_a'));
    await knex('seller_payment_ids')
      .where({ seller_id: 'sel_a', payment_id: 'a1'.padEnd(16, '0') })
      .update({ expires_at: past });
    const takeover = await knex.raw(
      `INSERT INTO seller_payment_ids (seller_id, route, payment_id, fingerprint, state, answer, created_at, expires_at)
       VALUES ('sel_a', '/paid', ?, ?, 'pending', NULL, ?, ?), ('sel_a', '/paid', ?, ?, 'pending', NULL, ?, ?)
       ON CONFLICT (seller_id, route, payment_id) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, state = 'pending', answer = NULL, expires_at = EXCLUDED.expires_at
         WHERE seller_payment_ids.expires_at <= EXCLUDED.created_at
       RETURNING 1`,
      ['a1'.padEnd(16, '0'), 'e'.repeat(64), now, later, 'a4'.padEnd(16, '0'), 'e'.repeat(64), now, later],
    );
    assert.equal(takeover.rows.length, 2, 'one row taken over, one inserted');
    assert.deepEqual(await totals('sel_a'), await recount('sel_a'));
    assert.deepEqual(await totals('sel_a'), [4, answerBytes], 'the taken-over answer left the total');
    await knex('seller_payment_ids')
      .where({ seller_id: 'sel_a', payment_id: 'a4'.padEnd(16, '0') })
      .delete();
    await knex('seller_payment_ids').where({ seller_id: 'sel_a', state: 'done' }).delete();
    assert.deepEqual(await totals('sel_a'), [2, 0]);
    assert.deepEqual(await totals('sel_a'), await recount('sel_a'));
    assert.deepEqual(await totals('sel_b'), [1, answerBytes], "another seller's totals stay");
    const indexes = await knex.raw(`SELECT 1 FROM pg_indexes WHERE indexname = 'seller_payment_ids_expiry'`);
    assert.equal(indexes.rows.length, 1);

    await knex.migrate.down();
    assert.ok(!(await knex.schema.hasTable('seller_payment_id_totals')));
    assert.ok(!(await knex.schema.hasColumn('seller_payment_ids', 'answer_bytes')));
    await knex('seller_payment_ids').insert(row('sel_b', 'b2', true));
    await knex.migrate.up();
    assert.deepEqual(await totals('sel_b'), [2, 2 * answerBytes]);
  });
});

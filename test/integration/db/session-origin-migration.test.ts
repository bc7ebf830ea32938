/**
 * Migration 20261125200100 (session_origin, parent_token_id) on a database that already holds sessions:
 * they recorded nothing about what they were made from, so the migration revokes them; afterwards
 * PostgreSQL refuses a live session without an origin, an exchanged one without its PAT, and an origin on a
 * PAT; it rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261125200100_session_origin.ts';

describe('session origin migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('revokes the sessions issued before it, then holds every new token to its origin; down and up again', async () => {
    const { knex } = db;
    let n = 0;
    const now = new Date();
    const token = (kind: string, extra: Record<string, unknown> = {}) => ({
      id: `tok_${String(++n).padStart(24, '0')}`,
      token_hash: String(n).padStart(64, '0'),
      kind,
      scope_type: kind === 'session' ? 'account' : 'agent',
      scope_id: 'acc_x',
      account_id: 'acc_x',
      created_by: 'test',
      created_at: now,
      ...extra,
    });
    const oldSession = token('session');
    const pat = token('pat');
    await knex('api_tokens').insert([oldSession, pat]);

    await knex.migrate.up();
    const old = await knex('api_tokens').where({ id: oldSession.id }).first('revoked_at', 'session_origin');
    assert.ok(old.revoked_at, 'a session that cannot say what it came from is revoked');
    assert.equal(old.session_origin, null);
    assert.equal(
      (await knex('api_tokens').where({ id: pat.id }).first('revoked_at')).revoked_at,
      null,
      'PATs are untouched',
    );

    await knex('api_tokens').insert(token('session', { session_origin: 'sign_in' }));
    await knex('api_tokens').insert(
      token('session', { session_origin: 'pat_exchange', parent_token_id: pat.id, scope_type: 'agent' }),
    );
    // Each refused row, the constraint that refuses it, and what it is.
    for (const [row, constraint, what] of [
      [token('session'), /api_tokens_session_origin/, 'a live session without an origin'],
      [
        token('session', { session_origin: 'pat_exchange' }),
        /api_tokens_exchange_parent/,
        'an exchanged session without its PAT',
      ],
      [
        token('session', { session_origin: 'sign_in', parent_token_id: pat.id }),
        /api_tokens_exchange_parent/,
        'a sign-in session naming a PAT',
      ],
      [token('pat', { session_origin: 'sign_in' }), /api_tokens_session_origin/, 'an origin on a PAT'],
      [token('session', { session_origin: 'admin' }), /api_tokens_session_origin/, 'an unknown origin'],
    ] as const)
      await assert.rejects(knex('api_tokens').insert(row), constraint, what);

    await knex.migrate.down();
    assert.ok(!(await knex.schema.hasColumn('api_tokens', 'session_origin')));
    await knex.migrate.up();
    assert.ok(await knex.schema.hasColumn('api_tokens', 'parent_token_id'));
    assert.equal(
      Number((await knex('api_tokens').whereNull('revoked_at').where({ kind: 'session' }).count({ n: '*' }))[0]!.n),
      0,
      'forward again: no live session without an origin',
    );
  });
});

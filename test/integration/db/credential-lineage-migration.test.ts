/**
 * Migration 20261128100000 (credential lineage) on a database that holds the orphans of the old rules: a
 * Treasury PAT minted by another Treasury PAT with no account (the parent expired, as the dashboard's
 * 15-minute PAT does), one minted by the legacy api key, one whose only link is its agent's Treasury account.
 * Each is attached to its platform account and its creator, and listed in `credential_lineage_repairs`;
 * a PAT minted by a sign-in session stays a root. Afterwards a PAT may name a parent; a session still must
 * exactly when exchanged. It rolls back and forward again.
 */
import assert from 'node:assert/strict';
import { useTestDatabaseBefore } from '../../support/test-database.js';

const MIGRATION = '20261128100000_credential_lineage.ts';

describe('credential lineage migration (PostgreSQL)', function () {
  this.timeout(60_000);
  const db = useTestDatabaseBefore(MIGRATION);

  it('attaches orphan PATs to their account and creator, lists them, and refuses a parentless exchange', async () => {
    const { knex } = db;
    const now = new Date();
    await knex('accounts').insert({ id: 'acc_a', created_at: now });
    await knex('treasury_accounts').insert([
      { id: 'acct_a', owner_type: 'agent', owner_id: 'agt_a', account_key_ref: 'k', status: 'active', created_at: now },
      { id: 'acct_org', owner_type: 'org', owner_id: 'o', account_key_ref: 'k', status: 'active', created_at: now },
    ]);
    await knex('agents').insert({ id: 'agt_a', account_id: 'acc_a', treasury_account_id: 'acct_a', created_at: now });
    let n = 0;
    const token = (row: Record<string, unknown>) => ({
      token_hash: String(n++).padStart(64, '0'),
      kind: 'pat',
      scope_type: 'treasury',
      scope_id: 'acct_a',
      created_at: now,
      ...row,
    });
    await knex('api_tokens').insert([
      token({
        id: 'ses_owner',
        kind: 'session',
        scope_type: 'account',
        scope_id: 'acc_a',
        account_id: 'acc_a',
        session_origin: 'sign_in',
        created_by: 'acc_a',
        expires_at: now,
      }),
      token({
        id: 'pat_dash',
        account_id: 'acc_a',
        created_by: 'ses_owner',
        expires_at: new Date(now.getTime() - 1000),
      }),
      token({ id: 'pat_orphan', created_by: 'pat_dash' }),
      token({ id: 'pat_ops', created_by: 'admin' }),
      token({ id: 'tok_key', kind: 'api_key', scope_id: 'acct_org', created_by: 'admin' }),
      token({ id: 'pat_of_key', scope_id: 'acct_org', created_by: 'tok_key' }),
    ]);

    await knex.migrate.up({ name: MIGRATION });
    const rows = Object.fromEntries(
      (await knex('api_tokens').select('id', 'account_id', 'parent_token_id')).map((r) => [r.id, r]),
    );
    assert.deepEqual(rows.pat_orphan, { id: 'pat_orphan', account_id: 'acc_a', parent_token_id: 'pat_dash' });
    assert.deepEqual(rows.pat_ops, { id: 'pat_ops', account_id: 'acc_a', parent_token_id: null });
    assert.deepEqual(rows.pat_of_key, { id: 'pat_of_key', account_id: null, parent_token_id: 'tok_key' });
    assert.deepEqual(
      rows.pat_dash,
      { id: 'pat_dash', account_id: 'acc_a', parent_token_id: null },
      'a root of the account',
    );
    const repairs = await knex('credential_lineage_repairs').orderBy('token_id').select('token_id', 'repair');
    assert.deepEqual(repairs, [
      { token_id: 'pat_of_key', repair: 'parent_attached' },
      { token_id: 'pat_ops', repair: 'account_attached' },
      { token_id: 'pat_orphan', repair: 'account_and_parent_attached' },
    ]);
    await assert.rejects(
      knex('api_tokens').insert(
        token({
          id: 'ses_bad',
          kind: 'session',
          scope_type: 'agent',
          account_id: 'acc_a',
          session_origin: 'pat_exchange',
          created_by: 'x',
        }),
      ),
      /api_tokens_session_parent/,
    );

    await knex.migrate.down({ name: MIGRATION });
    assert.ok(!(await knex.schema.hasTable('credential_lineage_repairs')));
    await knex.migrate.up({ name: MIGRATION });
    assert.equal(
      (await knex('api_tokens').where({ id: 'pat_orphan' }).first('parent_token_id')).parent_token_id,
      'pat_dash',
    );
  });
});

/**
 * The operator's remedy for a Treasury account whose credentials leaked, through HTTP with real PostgreSQL
 * and SoftHSM: POST /v1/treasuries/{id}/credentials/revoke (operator only) ends every credential of the
 * account, whatever its lineage, at once on this process (the bearer cache is 10 s here).
 *
 * Defends against a leaked legacy api key laundered into a credential nobody can end: the thief mints a
 * Treasury PAT with the key and retires the key *with that PAT* — the documented successor flow — so the PAT
 * becomes a root of no platform account that never expires, while the key and the holder's own PATs end.
 * Re-revoking the key answers 200 and DELETE /v1/pats/{id} has no owner for it; the operator's route ends it,
 * and the operator then mints the holder a new Treasury PAT, so nobody is locked out for good.
 * Also: an agent's Treasury account loses its owner's Treasury PATs, its agent PATs and their sessions while
 * the owner's sign-in stays and mints anew; the route is idempotent, audited, and refused to every other bearer.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('operator revokes every credential of a Treasury account (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;

  before(async () => {
    t = await startTestTreasury({ extraEnv: { TREASURY_AUTH_CACHE_MS: '10000' } });
  });
  after(async () => {
    await t?.stop();
  });

  const wallets = async (token: string) => (await t.request('GET', '/v1/wallets', { token })).status;
  const revokeAll = (treasuryId: string, token = t.adminToken) =>
    t.request('POST', `/v1/treasuries/${treasuryId}/credentials/revoke`, { token });

  it('ends the successor a leaked key laundered itself into; the operator then re-issues the holder a PAT', async () => {
    const account = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'org', owner_id: 'leaked' },
    });
    assert.equal(account.status, 201, JSON.stringify(account.body));
    const id = account.body.id as string;
    const key = account.body.api_key as string;
    const mint = async (token: string) => {
      const r = await t.request('POST', `/v1/treasuries/${id}/pats`, { token, body: {} });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { id: string; token: string };
    };
    const holder = await mint(key);
    const thief = await mint(key);
    const byOperator = await mint(t.adminToken); // a root of no platform account: no owner can revoke it either
    const retired = await t.request('POST', `/v1/treasuries/${id}/api-key/revoke`, { token: thief.token });
    assert.equal(retired.status, 200, JSON.stringify(retired.body));
    assert.deepEqual([await wallets(holder.token), await wallets(key), await wallets(thief.token)], [401, 401, 200]);
    const wallet = await t.request('POST', '/v1/wallets', { token: thief.token, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));

    // Nobody but the operator may call it: the thief's PAT is refused like any Treasury bearer.
    const bySelf = await revokeAll(id, thief.token);
    assert.equal(`${bySelf.status} ${bySelf.body.error_code}`, '403 insufficient_scope');

    const ended = await revokeAll(id);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    assert.equal(ended.body.treasury_id, id);
    assert.equal(ended.body.revoked, 2, 'the successor and the operator-minted PAT were live');
    assert.ok(!Number.isNaN(Date.parse(ended.body.revoked_at)));
    const refused = await t.request('GET', '/v1/wallets', { token: thief.token });
    assert.equal(`${refused.status} ${refused.body.error_code}`, '401 invalid_token', 'the cached successor is gone');
    assert.equal(await wallets(byOperator.token), 401);
    const rows = await t.db.knex('api_tokens').whereIn('id', [thief.id, byOperator.id]).select('revoked_at');
    assert.ok(rows.length === 2 && rows.every((r) => r.revoked_at !== null), 'revoked in the database too');
    const audit = await t.db.knex('audit_events').where({ chain_key: id, event_type: 'credentials.revoked' });
    assert.equal(audit.length, 1);
    assert.equal(audit[0].actor, 'admin');
    assert.deepEqual([...audit[0].payload.token_ids].sort(), [thief.id, byOperator.id].sort());

    // Idempotent: nothing live is left, nothing more is written.
    const again = await revokeAll(id);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.revoked, 0);
    assert.equal(
      (await t.db.knex('audit_events').where({ chain_key: id, event_type: 'credentials.revoked' })).length,
      1,
    );

    // The holder is not locked out: the operator mints a new Treasury PAT, which reaches the account's wallets.
    const reissued = await mint(t.adminToken);
    const listed = await t.request('GET', '/v1/wallets', { token: reissued.token });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.ok(
      (listed.body.wallets as Array<{ id: string }>).some((w) => w.id === wallet.body.id),
      'the account and its wallets stay',
    );
  });

  it('on an agent’s Treasury account: ends Treasury and agent PATs and their sessions; the owner signs in anew', async () => {
    const owner = await signInWithNewKey(t);
    const pat = async (body: Record<string, unknown>) => {
      const r = await t.request('POST', '/v1/pats', { token: owner.session, body });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { pat: string; scope_id: string };
    };
    const treasuryPat = await pat({ scope_type: 'treasury' });
    const agentPat = await pat({ scope_type: 'agent' });
    const gatePat = await pat({ scope_type: 'gate' }); // the account's, not the Treasury account's
    const exchanged = await t.request('POST', '/v1/identity/exchange-pat', { token: agentPat.pat });
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    assert.equal(await wallets(exchanged.body.session), 200);

    const ended = await revokeAll(treasuryPat.scope_id);
    assert.equal(ended.status, 200, JSON.stringify(ended.body));
    for (const token of [treasuryPat.pat, agentPat.pat, exchanged.body.session as string])
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token })).status, 401);
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: gatePat.pat })).status, 200);
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: owner.session })).status, 200);
    assert.equal(await wallets((await pat({ scope_type: 'agent' })).pat), 200, 'the owner mints a new agent PAT');
  });

  it('an unknown account is 404 account_not_found; a malformed id 400', async () => {
    const unknown = await revokeAll(`acct_${'0'.repeat(24)}`);
    assert.equal(`${unknown.status} ${unknown.body.error_code}`, '404 account_not_found');
    const malformed = await revokeAll('acct_nope');
    assert.equal(`${malformed.status} ${malformed.body.error_code}`, '400 invalid_path_parameter');
  });
});

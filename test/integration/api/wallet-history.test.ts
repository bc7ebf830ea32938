/**
 * A wallet's history over HTTP: GET /v1/wallets/{id}/decisions lists the newest policy decisions with their
 * pd_ ids, outcome, amount, recipient and violated rules; GET /v1/wallets/{id}/audit lists the newest audit
 * events and the chain's state — verified, then broken (with the first broken seq and why) once its newest
 * row, the one the app remembers as verified, is altered behind the append-only trigger
 * (./wallet-audit-remembered.test.ts: the rest of what a remembered row means). Another account's wallet is a
 * 404, a bad limit a 400, no bearer 401.
 */
import assert from 'node:assert/strict';
import { useTestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import {
  walletAuditSchema,
  walletDecisionsSchema,
} from '../../../src/shared/api-responses/wallet-history-responses.js';

describe('wallet history: decisions and audit chain (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  async function ownerWithWallet() {
    const { session } = await signInWithNewKey(t);
    const treasury = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    const agent = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } })).body
      .pat as string;
    const wallet = (
      await t.request('POST', '/v1/wallets', {
        token: treasury,
        body: { label: 'h', policy: { per_tx_cap_usd: '0.5' } },
      })
    ).body;
    return { treasury, agent, wallet };
  }

  it('lists decisions with pd_ ids and violated rules, and the audit chain verified then broken', async () => {
    const { treasury, agent, wallet } = await ownerWithWallet();
    const pay = (amount: string) =>
      t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: agent,
        body: { payment_requirements: paymentRequirements({ amount }) },
      });
    assert.equal((await pay('100000')).status, 200);
    const refused = await pay('900000');
    assert.equal(refused.status, 403, JSON.stringify(refused.body));

    const decisions = await t.request('GET', `/v1/wallets/${wallet.id}/decisions`, { token: agent });
    assert.equal(decisions.status, 200, JSON.stringify(decisions.body));
    assert.deepEqual(walletDecisionsSchema.parse(decisions.body), decisions.body);
    const [deny, allow] = decisions.body.decisions;
    assert.equal(decisions.body.decisions.length, 2);
    assert.deepEqual([deny.outcome, deny.amount_usd, allow.outcome, allow.amount_usd], ['deny', '0.9', 'allow', '0.1']);
    assert.match(deny.id, /^pd_[0-9a-f]{24}$/);
    assert.deepEqual(
      deny.violations.map((v: { rule: string }) => v.rule),
      ['per_tx_cap_usd'],
    );
    assert.deepEqual(allow.violations, []);
    assert.match(allow.id, /^pd_[0-9a-f]{24}$/);
    assert.equal(deny.id, refused.body.decision_id, 'the id the 403 named');
    assert.equal(deny.authorization_id, null);
    const auth = await t.db.knex('authorizations').where({ wallet_id: wallet.id }).first();
    assert.deepEqual([allow.authorization_id, allow.id], [auth.id, auth.decision_id]);
    const one = await t.request('GET', `/v1/wallets/${wallet.id}/decisions?limit=1`, { token: treasury });
    assert.deepEqual(
      one.body.decisions.map((d: { id: string }) => d.id),
      [deny.id],
    );

    const audit = await t.request('GET', `/v1/wallets/${wallet.id}/audit`, { token: agent });
    assert.equal(audit.status, 200, JSON.stringify(audit.body));
    assert.deepEqual(walletAuditSchema.parse(audit.body), audit.body);
    assert.equal(audit.body.verification.state, 'verified');
    const seqs = audit.body.events.map((e: { seq: number }) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => b - a),
      'newest first',
    );
    assert.equal(audit.body.verification.rows, seqs[0]);
    assert.equal(audit.body.events[0].prev_hash, audit.body.events[1].hash, 'linked');

    await t.db.knex.raw('ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update');
    try {
      await t.db.knex('audit_events').where({ chain_key: wallet.id, seq: seqs[0] }).update({ actor: 'mallory' });
    } finally {
      await t.db.knex.raw('ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update');
    }
    const broken = await t.request('GET', `/v1/wallets/${wallet.id}/audit`, { token: treasury });
    assert.deepEqual(
      { ...broken.body.verification, rows: undefined },
      { state: 'broken', rows: undefined, seq: seqs[0], reason: 'hash_mismatch' },
    );
  });

  it('another account’s wallet is a 404, a bad limit a 400, no bearer a 401', async () => {
    const mine = await ownerWithWallet();
    const theirs = await ownerWithWallet();
    for (const route of ['decisions', 'audit']) {
      const other = await t.request('GET', `/v1/wallets/${theirs.wallet.id}/${route}`, { token: mine.agent });
      assert.equal(other.status, 404, route);
      assert.equal(other.body.error_code, 'wallet_not_found');
      assert.equal(
        (await t.request('GET', `/v1/wallets/${mine.wallet.id}/${route}?limit=101`, { token: mine.agent })).status,
        400,
      );
      assert.equal(
        (await t.request('GET', `/v1/wallets/${mine.wallet.id}/${route}?x=1`, { token: mine.agent })).status,
        400,
      );
      assert.equal((await t.request('GET', `/v1/wallets/${mine.wallet.id}/${route}`)).status, 401);
    }
  });
});

/**
 * Agents through HTTP: the sign-in session lists its auto-spawned agent, spawns another (each with its own
 * Treasury account), and adds wallets to an agent; the agent's own PAT reads itself and adds wallets to its
 * own Treasury account but cannot set their policy, touch a sibling, or list the account's agents; another
 * account sees 404. The wallet then pays with the agent PAT.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

describe('agents (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;

  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  it('session manages agents; an agent PAT adds wallets to itself only; others see 404', async () => {
    const me = await signInWithNewKey(t);
    const listed = await t.request('GET', '/v1/agents', { token: me.session });
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(listed.body.agents.map((a: { agent_id: string }) => a.agent_id), [me.agent_id]);

    const spawned = await t.request('POST', '/v1/agents', { token: me.session, body: { label: 'research' } });
    assert.equal(spawned.status, 201);
    assert.equal(spawned.body.label, 'research');
    assert.notEqual(spawned.body.treasury_account_id, listed.body.agents[0].treasury_account_id, 'each agent has its own Treasury account');

    const owned = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: me.session, body: { label: 'main', network: 'eip155:84532', policy: { per_tx_cap_usd: '0.5' } } });
    assert.equal(owned.status, 201, JSON.stringify(owned.body));
    assert.equal(owned.body.network, 'eip155:84532');

    const pat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'agent', scope_id: me.agent_id, label: 'cli' } })).body.pat as string;
    const self = await t.request('GET', `/v1/agents/${me.agent_id}`, { token: pat });
    assert.equal(self.status, 200);
    assert.deepEqual(self.body.wallets.map((w: { id: string }) => w.id), [owned.body.id]);
    const extra = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: pat, body: { label: 'second' } });
    assert.equal(extra.status, 201);
    const withPolicy = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: pat, body: { policy: {} } });
    assert.equal(withPolicy.status, 403);
    assert.equal((await t.request('GET', `/v1/agents/${spawned.body.agent_id}`, { token: pat })).status, 404, 'a sibling agent is not visible to this PAT');
    assert.equal((await t.request('GET', '/v1/agents', { token: pat })).status, 403);

    // The agent PAT pays with its wallet; the owner's policy applies.
    const ok = await t.request('POST', `/v1/wallets/${owned.body.id}/pay`, { token: pat, body: { payment_requirements: paymentRequirements({ amount: '500000' }) } });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const denied = await t.request('POST', `/v1/wallets/${owned.body.id}/pay`, { token: pat, body: { payment_requirements: paymentRequirements({ amount: '500001' }) } });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.rule, 'per_tx_cap_usd');

    const stranger = await signInWithNewKey(t);
    assert.equal((await t.request('GET', `/v1/agents/${me.agent_id}`, { token: stranger.session })).status, 404);
    assert.equal((await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: stranger.session, body: {} })).status, 404);
    assert.equal((await t.request('GET', '/v1/agents/agt_nothex', { token: me.session })).status, 400);
  });
});

/**
 * Owner-signed policies through HTTP, the real signer (with its own policy store) and PostgreSQL
 * (docs/adr/0012-owner-signed-policies.md): the owner signs in with a viem key, signs their wallet's policy
 * with the same key, and the signer enforces it itself — so a compromised API (its database rewritten: the
 * policy loosened, the spend totals zeroed, the decisions deleted, the counterparty list flipped) still cannot
 * get a payment outside the signed policy signed. Also: a document signed by another key, an older version,
 * an unsigned change of a signed wallet, and the authority an agent made later by the owner's session gets.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody } from '../../support/sign-in.js';

const OTHER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const usd = (n: number) => String(Math.round(n * 1_000_000));
/** What the owner signs: $1 a payment, $2 a day, the seller only. */
const SIGNED = { per_tx_cap_usd: '1', daily_cap_usd: '2', counterparty_allowlist: [SELLER_ADDRESS] };

describe('owner-signed policies (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let session: string;
  let agentId: string;
  let pat: string;

  before(async () => {
    t = await startTestTreasury();
    owner = privateKeyToAccount(generatePrivateKey());
    const signedIn = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, owner) });
    assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
    ({ session, agent_id: agentId } = signedIn.body);
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
  });
  after(async () => {
    await t?.stop();
  });

  async function newWallet(token = pat): Promise<{ id: string; address: string; policy_state: string }> {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: { per_tx_cap_usd: '1' } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  async function signedBody(
    wallet: { address: string },
    policy: Record<string, unknown>,
    version: number,
    signer: PrivateKeyAccount = owner,
  ) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const parsed = walletPolicySchema.parse(policy);
    const signature = await signer.signTypedData(
      policyTypedData({ wallet: wallet.address, policy: parsed, version, issuedAt }),
    );
    return { policy, version, issued_at: issuedAt, signature };
  }

  const putSigned = (walletId: string, body: unknown, token = pat) =>
    t.request('PUT', `/v1/wallets/${walletId}/policy/signed`, { token, body });

  const pay = (walletId: string, amount: number, payTo = SELLER_ADDRESS) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: usd(amount), payTo, maxTimeoutSeconds: 300 }) },
    });

  /** A signed wallet: made, its policy signed by the owner at version 1 and accepted. */
  async function signedWallet() {
    const wallet = await newWallet();
    const res = await putSigned(wallet.id, await signedBody(wallet, SIGNED, 1));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return wallet;
  }

  /** A 403 the signer decided: the denial's body, its `pd_` decision row and audit row. */
  async function expectSignerDenied(res: { status: number; body: any }, walletId: string, rule: string) {
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'policy_denied');
    assert.equal(res.body.decided_by, 'signer');
    assert.equal(res.body.reason, 'policy_denied');
    assert.ok(res.body.rules.includes(rule), `${rule} not in ${res.body.rules}`);
    assert.equal(res.body.violations[0].rule, res.body.rule);
    assert.match(res.body.decision_id, /^pd_[0-9a-f]{24}$/);
    const row = await t.db.knex('policy_decisions').where({ id: res.body.decision_id }).first();
    assert.equal(row?.wallet_id, walletId);
    assert.equal(row?.decided_by, 'signer');
    assert.equal(row?.outcome, 'deny');
    const audit = await t.db
      .knex('audit_events')
      .where({ chain_key: walletId, event_type: 'policy.denied' })
      .whereRaw(`payload->>'decision_id' = ?`, [res.body.decision_id])
      .first();
    assert.equal(audit?.payload.decided_by, 'signer');
    const listed = await t.request('GET', `/v1/wallets/${walletId}/decisions`, { token: pat });
    const decision = listed.body.decisions.find((d: { id: string }) => d.id === res.body.decision_id);
    assert.equal(decision?.decided_by, 'signer', 'the wallet history names the signer as the refuser');
  }

  it("records the owner as the authority of the sign-in's account, and reads it back from the signer", async () => {
    const wallet = await newWallet();
    assert.equal(wallet.policy_state, 'ceilings_only');
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: pat });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body.owner_policy, {
      state: 'ceilings_only',
      authority: { kind: 'owner', address: owner.address },
      version: null,
      policy_hash: null,
      issued_at: null,
      next_version: 1,
    });
  });

  it('names the owner for an agent made later by the owner session (its own sign-in proof)', async () => {
    const spawned = await t.request('POST', '/v1/agents', { token: session, body: { label: 'second' } });
    assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
    const made = await t.request('POST', `/v1/agents/${spawned.body.agent_id}/wallets`, { token: session, body: {} });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const held = await t.app.services.signer.call('get_wallet_policy', { address: made.body.address });
    assert.equal(held.authority?.kind, 'owner');
    assert.equal(held.authority?.address?.toLowerCase(), owner.address.toLowerCase());
    assert.notEqual(spawned.body.agent_id, agentId);
  });

  it('stores a signed policy the signer accepted, with its signature audited; pays within it, the API refuses above it', async () => {
    const wallet = await newWallet();
    const body = await signedBody(wallet, SIGNED, 1);
    const res = await putSigned(wallet.id, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.wallet_id, wallet.id);
    assert.equal(res.body.policy.daily_cap_usd, '2');
    assert.equal(res.body.owner_policy.state, 'owner_signed');
    assert.equal(res.body.owner_policy.version, 1);
    assert.equal(res.body.owner_policy.next_version, 2);
    assert.deepEqual(res.body.owner_policy.authority, { kind: 'owner', address: owner.address });
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: pat });
    assert.deepEqual(read.body.owner_policy, res.body.owner_policy);
    const view = await t.request('GET', `/v1/wallets/${wallet.id}`, { token: pat });
    assert.equal(view.body.policy_state, 'owner_signed');
    const audit = await t.db.knex('audit_events').where({ chain_key: wallet.id, event_type: 'policy.signed' }).first();
    assert.equal(audit?.payload.signature, body.signature);
    assert.equal(audit?.payload.version, 1);

    assert.equal((await pay(wallet.id, 0.5)).status, 200);
    const above = await pay(wallet.id, 1.5);
    assert.equal(above.status, 403, JSON.stringify(above.body));
    assert.equal(above.body.error_code, 'policy_denied');
    assert.equal(above.body.decided_by, undefined, 'the API refused it before the signer was asked');
    const listed = (await t.request('GET', `/v1/wallets/${wallet.id}/decisions`, { token: pat })).body.decisions;
    assert.deepEqual(
      listed.map((d: { outcome: string; decided_by: string | null }) => [d.outcome, d.decided_by]),
      [
        ['deny', 'api'],
        ['allow', null],
      ],
    );
  });

  it('refuses what the signed policy refuses when the API is compromised: policy loosened, totals zeroed, decisions gone, counterparties flipped', async () => {
    const wallet = await signedWallet();
    assert.equal((await pay(wallet.id, 0.9)).status, 200);
    // The API's own database rewritten: no caps, no allowlist (a blocklist of the seller instead, which the
    // API would apply), nothing spent, no decisions.
    await t.db
      .knex('wallets')
      .where({ id: wallet.id })
      .update({ policy: JSON.stringify({ counterparty_blocklist: [SELLER_ADDRESS] }) });
    await t.db.knex('wallet_spend_totals').where({ wallet_id: wallet.id }).update({ spent_micro: 0 });
    await t.db.knex('policy_decisions').where({ wallet_id: wallet.id }).delete();
    t.app.services.pay.forgetWallet(wallet.id);

    await expectSignerDenied(await pay(wallet.id, 1.5, OTHER), wallet.id, 'per_tx_cap_usd');
    await expectSignerDenied(await pay(wallet.id, 0.5, OTHER), wallet.id, 'counterparty_allowlist');
    // The API now refuses the seller (its flipped list) — the owner's own list is still the signer's.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy: '{}' });
    t.app.services.pay.forgetWallet(wallet.id);
    assert.equal((await pay(wallet.id, 0.9)).status, 200, 'the signer counts $1.80 of its $2 day');
    const before = await t.db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first();
    const overDay = await pay(wallet.id, 0.5);
    await expectSignerDenied(overDay, wallet.id, 'daily_cap_usd');
    const after = await t.db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first();
    assert.equal(String(after.spent_micro), String(before.spent_micro), 'the refused reservation was given back');
  });

  it('refuses a document signed by another key (403), an older version (409) and an unsigned change (409)', async () => {
    const wallet = await signedWallet();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = await putSigned(wallet.id, await signedBody(wallet, {}, 2, stranger));
    assert.equal(forged.status, 403, JSON.stringify(forged.body));
    assert.equal(forged.body.error_code, 'policy_signature_invalid');
    assert.equal(forged.body.rule, 'authority');

    const replayed = await putSigned(wallet.id, await signedBody(wallet, {}, 1));
    assert.equal(replayed.status, 409, JSON.stringify(replayed.body));
    assert.equal(replayed.body.error_code, 'policy_version_stale');
    assert.equal(replayed.body.current_version, 1);

    const unsigned = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, { token: pat, body: {} });
    assert.equal(unsigned.status, 409, JSON.stringify(unsigned.body));
    assert.equal(unsigned.body.error_code, 'policy_signature_required');
    assert.equal(unsigned.body.next_version, 2);
    // The API forgetting it stored a signed policy changes nothing: the signer is asked.
    await t.db
      .knex('wallets')
      .where({ id: wallet.id })
      .update({ policy_version: null, policy_issued_at: null, policy_signature: null });
    const forgotten = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, { token: pat, body: {} });
    assert.equal(forgotten.status, 409, JSON.stringify(forgotten.body));

    const v2 = await signedBody(wallet, { per_tx_cap_usd: '3' }, 2);
    const next = await putSigned(wallet.id, v2);
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.owner_policy.version, 2);
    const held = await t.db.knex('wallets').where({ id: wallet.id }).first();
    assert.deepEqual([held.policy_version, held.policy_signature], ['2', v2.signature]);
  });

  it('shows in whoami whether every wallet a bearer reaches is owner-signed', async () => {
    const agent = (await t.request('POST', '/v1/agents', { token: session, body: { label: 'whoami' } })).body;
    const mint = async (body: Record<string, unknown>) =>
      (await t.request('POST', '/v1/pats', { token: session, body })).body.pat as string;
    const agentPat = await mint({ scope_type: 'agent', scope_id: agent.agent_id });
    const treasuryPat = await mint({ scope_type: 'treasury', scope_id: agent.treasury_account_id });
    const state = async (token: string) => (await t.request('GET', '/v1/auth/whoami', { token })).body.policy_state;
    assert.equal(await state(agentPat), 'ceilings_only', 'no wallet yet');
    const wallet = await newWallet(treasuryPat);
    assert.equal(await state(agentPat), 'ceilings_only');
    const res = await putSigned(wallet.id, await signedBody(wallet, SIGNED, 1), treasuryPat);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await state(agentPat), 'owner_signed');
    assert.equal(await state(treasuryPat), 'owner_signed');
    assert.equal(await state(session), 'ceilings_only', "the owner's other agents hold unsigned wallets");
  });

  it("puts an operator-minted account under the deployment's approver (none configured here: nobody can sign)", async () => {
    const apiKey = await mintAgentKey(t, 'minted');
    const wallet = await newWallet(apiKey);
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: apiKey });
    assert.deepEqual(read.body.owner_policy.authority, { kind: 'approver', address: null });
    const refused = await putSigned(wallet.id, await signedBody(wallet, SIGNED, 1), apiKey);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.rule, 'no_approver_configured');
  });

  it('still takes unsigned policies on a wallet the signer holds no signed policy for', async () => {
    const wallet = await newWallet();
    const res = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, {
      token: pat,
      body: { per_tx_cap_usd: '2' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.owner_policy.state, 'ceilings_only');
  });
});

describe('owner-signed policies with a signer that keeps no policy store', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury({ policyStore: false });
  });
  after(async () => {
    await t?.stop();
  });

  it('reads ceilings_only, takes unsigned policies, and answers a signed one 503 no_policy_store', async () => {
    const token = await mintAgentKey(t, 'no-store');
    const made = await t.request('POST', '/v1/wallets', { token, body: {} });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const read = await t.request('GET', `/v1/wallets/${made.body.id}/policy`, { token });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body.owner_policy, {
      state: 'ceilings_only',
      authority: null,
      version: null,
      policy_hash: null,
      issued_at: null,
      next_version: 1,
    });
    const unsigned = await t.request('PUT', `/v1/wallets/${made.body.id}/policy`, {
      token,
      body: { per_tx_cap_usd: '1' },
    });
    assert.equal(unsigned.status, 200, JSON.stringify(unsigned.body));
    const signed = await t.request('PUT', `/v1/wallets/${made.body.id}/policy/signed`, {
      token,
      body: { policy: {}, version: 1, issued_at: 1, signature: `0x${'11'.repeat(65)}` },
    });
    assert.equal(signed.status, 503, JSON.stringify(signed.body));
    assert.equal(signed.body.error_code, 'signer_unavailable');
    assert.deepEqual([signed.body.reason, signed.body.rule], ['policy_store_unavailable', 'no_policy_store']);
  });
});

describe("owner-signed policies when the signer's policy store is gone", function () {
  this.timeout(180_000);
  /**
   * The signer's open-spend lease (docs/adr/0012, "recorded after release"): for this long after the store last
   * saw the wallet without a policy, its spends may still be released and recorded after; then they fail closed.
   */
  const LEASE_MS = 250;
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury({ signerEnv: { TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: String(LEASE_MS) } });
  });
  after(async () => {
    await t?.stop();
  });

  it('fails closed: policy reads, unsigned changes and payments answer 503 signer_unavailable, nothing counted', async () => {
    const token = await mintAgentKey(t, 'store-gone');
    const made = await t.request('POST', '/v1/wallets', { token, body: { policy: { per_tx_cap_usd: '1' } } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    await t.signer.policyStore!.drop();

    const read = await t.request('GET', `/v1/wallets/${made.body.id}/policy`, { token });
    assert.equal(read.status, 503, JSON.stringify(read.body));
    assert.deepEqual([read.body.error_code, read.body.reason], ['signer_unavailable', 'policy_store_unavailable']);
    const unsigned = await t.request('PUT', `/v1/wallets/${made.body.id}/policy`, { token, body: {} });
    assert.equal(unsigned.status, 503, JSON.stringify(unsigned.body));
    const stored = await t.db.knex('wallets').where({ id: made.body.id }).first();
    assert.deepEqual(stored.policy, { per_tx_cap_usd: '1' }, 'the unsigned change was not written');

    // The store's last word on the wallet came before the drop: one lease after it, nothing is released.
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 100));
    const paid = await t.request('POST', `/v1/wallets/${made.body.id}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: usd(0.5), maxTimeoutSeconds: 300 }) },
    });
    assert.equal(paid.status, 503, JSON.stringify(paid.body));
    assert.equal(paid.body.reason, 'policy_store_unavailable');
    const day = await t.db.knex('wallet_spend_totals').where({ wallet_id: made.body.id, window_kind: 'day' }).first();
    assert.equal(String(day?.spent_micro ?? 0), '0', 'the reservation was given back');
  });
});

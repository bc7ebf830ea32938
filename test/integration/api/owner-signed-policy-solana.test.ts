/**
 * Owner-signed policies of Solana wallets through HTTP, the real signer (SoftHSM Ed25519 keys, its own policy
 * store), PostgreSQL and the offline Solana chain (docs/adr/0012-owner-signed-policies.md): the owner signs in with
 * a viem key and signs the Solana wallet's policy (the EIP-712 document naming the wallet's base58 address); the
 * signer then checks every Solana payment itself — so with the API's database rewritten (the policy loosened, the
 * spend totals zeroed, the decisions deleted) a payment outside the signed policy is still refused, as a `pd_`
 * decision the signer made. Also: another key's document, an older version, an unsigned change, and an
 * operator-minted account's Solana wallet (the approver's, none configured here).
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody, signInWithTreasuryPat } from '../../support/sign-in.js';
import { solanaPaymentRequirements } from '../../builders/payment-requirements.js';

const usd = (n: number) => String(Math.round(n * 1_000_000));

describe('owner-signed policies of Solana wallets (HTTP, signer policy store, offline Solana chain)', function () {
  this.timeout(180_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let pat: string;
  let payTo: Address;
  let other: Address;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl, TREASURY_RPC_TIMEOUT_MS: '20000' },
    });
    owner = privateKeyToAccount(generatePrivateKey());
    ({ pat } = await signInWithTreasuryPat(t, await signInBody(t, undefined, owner)));
    payTo = (await generateKeyPairSigner()).address;
    other = (await generateKeyPairSigner()).address;
  });
  after(async () => {
    await t?.stop();
    await solana?.stop();
  });

  async function newWallet(token = pat): Promise<{ id: string; address: string }> {
    const res = await t.request('POST', '/v1/wallets', { token, body: { chain: 'solana-devnet', policy: {} } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    await solana.faucet.fundUsdc(res.body.address as Address, 10_000_000n);
    return res.body;
  }

  async function signedBody(wallet: { address: string }, policy: Record<string, unknown>, version: number, by = owner) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const parsed = walletPolicySchema.parse(policy);
    const signature = await by.signTypedData(
      policyTypedData({ wallet: wallet.address, policy: parsed, version, issuedAt }),
    );
    return { policy, version, issued_at: issuedAt, signature };
  }

  const putSigned = (walletId: string, body: unknown, token = pat) =>
    t.request('PUT', `/v1/wallets/${walletId}/policy/signed`, { token, body });

  let memo = 0;
  const pay = (walletId: string, amount: number, to: Address = payTo) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: {
        payment_requirements: solanaPaymentRequirements(solana, usd(amount), to, {
          extra: { feePayer: solana.feePayer, memo: `owner-signed ${memo++}` },
        }),
      },
    });

  function expectSignerDenied(res: { status: number; body: any }, rule: string) {
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'policy_denied');
    assert.equal(res.body.decided_by, 'signer');
    assert.ok(res.body.rules.includes(rule), `${rule} not in ${res.body.rules}`);
    assert.match(res.body.decision_id, /^pd_[0-9a-f]{24}$/);
  }

  it('records the owner as the Solana wallet’s authority and takes the document naming its base58 address', async () => {
    const wallet = await newWallet();
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: pat });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.owner_policy.state, 'ceilings_only');
    assert.deepEqual(read.body.owner_policy.authority, { kind: 'owner', address: owner.address });
    const body = await signedBody(wallet, { per_tx_cap_usd: '1', counterparty_allowlist: [payTo] }, 1);
    const res = await putSigned(wallet.id, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.owner_policy.state, 'owner_signed');
    assert.deepEqual(res.body.policy.counterparty_allowlist, [payTo]);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: wallet.address });
    assert.equal(held.address, wallet.address);
    assert.equal(held.current?.version, 1);
    const view = await t.request('GET', `/v1/wallets/${wallet.id}`, { token: pat });
    assert.equal(view.body.policy_state, 'owner_signed');
    const audit = await t.db.knex('audit_events').where({ chain_key: wallet.id, event_type: 'policy.signed' }).first();
    assert.equal(audit?.payload.signature, body.signature);
  });

  it('refuses Solana payments outside the signed policy when the API is compromised: policy loosened, totals zeroed, decisions gone', async () => {
    const wallet = await newWallet();
    const signed = await putSigned(
      wallet.id,
      await signedBody(wallet, { per_tx_cap_usd: '1', daily_cap_usd: '2', counterparty_allowlist: [payTo] }, 1),
    );
    assert.equal(signed.status, 200, JSON.stringify(signed.body));
    assert.equal((await pay(wallet.id, 0.9)).status, 200);
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy: '{}' });
    await t.db.knex('wallet_spend_totals').where({ wallet_id: wallet.id }).update({ spent_micro: 0 });
    await t.db.knex('policy_decisions').where({ wallet_id: wallet.id }).delete();
    t.app.services.pay.forgetWallet(wallet.id);

    expectSignerDenied(await pay(wallet.id, 1.5), 'per_tx_cap_usd');
    expectSignerDenied(await pay(wallet.id, 0.5, other), 'counterparty_allowlist');
    assert.equal((await pay(wallet.id, 0.9)).status, 200, 'the signer counts $1.80 of its $2 day');
    const overDay = await pay(wallet.id, 0.5);
    expectSignerDenied(overDay, 'daily_cap_usd');
    const row = await t.db.knex('policy_decisions').where({ id: overDay.body.decision_id }).first();
    assert.equal(row?.decided_by, 'signer');
  });

  it('refuses another key’s document (403), an older version (409) and an unsigned change of a signed Solana wallet (409)', async () => {
    const wallet = await newWallet();
    assert.equal((await putSigned(wallet.id, await signedBody(wallet, { per_tx_cap_usd: '1' }, 1))).status, 200);
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = await putSigned(wallet.id, await signedBody(wallet, {}, 2, stranger));
    assert.equal(forged.status, 403, JSON.stringify(forged.body));
    assert.equal(forged.body.error_code, 'policy_signature_invalid');
    const replayed = await putSigned(wallet.id, await signedBody(wallet, {}, 1));
    assert.equal(replayed.status, 409, JSON.stringify(replayed.body));
    assert.equal(replayed.body.error_code, 'policy_version_stale');
    const unsigned = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, { token: pat, body: {} });
    assert.equal(unsigned.status, 409, JSON.stringify(unsigned.body));
    assert.equal(unsigned.body.error_code, 'policy_signature_required');
  });

  it("puts an operator-minted account's Solana wallet under the deployment's approver (none configured: nobody can sign)", async () => {
    const apiKey = await mintAgentKey(t, 'minted-solana');
    const wallet = await newWallet(apiKey);
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: apiKey });
    assert.deepEqual(read.body.owner_policy.authority, { kind: 'approver', address: null });
    const refused = await putSigned(wallet.id, await signedBody(wallet, {}, 1), apiKey);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.rule, 'no_approver_configured');
  });
});

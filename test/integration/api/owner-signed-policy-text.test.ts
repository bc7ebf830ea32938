/**
 * The owner-signed policy in its `policy_text` form through HTTP, the real signer (with its own policy store) and
 * PostgreSQL (policy/signed-policy.ts, docs/adr/0012-owner-signed-policies.md): PUT /v1/wallets/{id}/policy/signed
 * with `form: 'policy_text'` relays the form to the signer, which recovers the signature under it; the API keeps the
 * form beside the signature (the wallet row and the `policy.signed` audit row), and the signer enforces the policy
 * when the API's copy is loosened. The same signature naming no form is refused; so is the text form beside a 64-byte
 * Ed25519 signature, and a form the schema does not know. A policy at the schema's bounds (1,000 allowed and 1,000
 * blocked addresses) spelled out is signed and kept.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash, policyTextTypedData } from '../../../policy/signed-policy.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody } from '../../support/sign-in.js';

const usd = (n: number) => String(Math.round(n * 1_000_000));
/** `count` distinct lower-case addresses, numbered from `from`. */
const addresses = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `0x${(from + i).toString(16).padStart(40, '0')}`);

describe('owner-signed policies in the policy_text form (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let pat: string;

  before(async () => {
    t = await startTestTreasury();
    owner = privateKeyToAccount(generatePrivateKey());
    const signedIn = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, owner) });
    assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
    const minted = await t.request('POST', '/v1/pats', {
      token: signedIn.body.session,
      body: { scope_type: 'treasury' },
    });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
  });
  after(async () => {
    await t?.stop();
  });

  async function newWallet(): Promise<{ id: string; address: string }> {
    const res = await t.request('POST', '/v1/wallets', { token: pat, body: { policy: { per_tx_cap_usd: '1' } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  /** The PUT body of `policy` at `version`, signed by the owner in the text form and naming it. */
  async function textBody(wallet: { address: string }, policy: Record<string, unknown>, version: number) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const parsed = walletPolicySchema.parse(policy);
    const typed = policyTextTypedData({ wallet: wallet.address, policy: parsed, version, issuedAt });
    const signature = await owner.signTypedData(typed);
    return { policy, version, issued_at: issuedAt, signature, form: 'policy_text' as const };
  }

  const putSigned = (walletId: string, body: unknown) =>
    t.request('PUT', `/v1/wallets/${walletId}/policy/signed`, { token: pat, body });
  const pay = (walletId: string, amount: number) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: usd(amount), maxTimeoutSeconds: 300 }) },
    });

  it('keeps a text-form document with its form, and the signer enforces it; the signature without its form is refused', async () => {
    const wallet = await newWallet();
    const policy = { per_tx_cap_usd: '1', counterparty_allowlist: [SELLER_ADDRESS] };
    const body = await textBody(wallet, policy, 1);

    const { form: _form, ...unnamed } = body;
    const misread = await putSigned(wallet.id, unnamed);
    assert.equal(misread.status, 403, JSON.stringify(misread.body));
    assert.deepEqual([misread.body.error_code, misread.body.rule], ['policy_signature_invalid', 'authority']);
    const unknown = await putSigned(wallet.id, { ...body, form: 'policy_json' });
    assert.equal(unknown.status, 400, JSON.stringify(unknown.body));
    const ed25519 = await putSigned(wallet.id, { ...body, signature: `0x${'11'.repeat(64)}` });
    assert.equal(ed25519.status, 403, JSON.stringify(ed25519.body));
    assert.equal(ed25519.body.rule, 'signature_form');

    const res = await putSigned(wallet.id, body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(
      [res.body.owner_policy.state, res.body.owner_policy.version, res.body.owner_policy.policy_hash],
      ['owner_signed', 1, policyDocumentHash(walletPolicySchema.parse(policy))],
    );
    const row = await t.db.knex('wallets').where({ id: wallet.id }).first();
    assert.deepEqual([row.policy_signature, row.policy_signature_form], [body.signature, 'policy_text']);
    const audit = await t.db.knex('audit_events').where({ chain_key: wallet.id, event_type: 'policy.signed' }).first();
    assert.deepEqual([audit?.payload.signature, audit?.payload.form], [body.signature, 'policy_text']);

    // The API's copy loosened: the signer still holds the owner's text-form document.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy: '{}' });
    t.app.services.pay.forgetWallet(wallet.id);
    assert.equal((await pay(wallet.id, 0.5)).status, 200);
    const above = await pay(wallet.id, 1.5);
    assert.equal(above.status, 403, JSON.stringify(above.body));
    assert.deepEqual([above.body.error_code, above.body.decided_by], ['policy_denied', 'signer']);
  });

  it('signs and keeps a policy at the bounds spelled out: 1,000 allowed and 1,000 blocked addresses', async () => {
    const wallet = await newWallet();
    const policy = {
      per_tx_cap_usd: '1',
      counterparty_allowlist: [SELLER_ADDRESS, ...addresses(1, 999)],
      counterparty_blocklist: addresses(5000, 1000),
    };
    const body = await textBody(wallet, policy, 1);
    const res = await putSigned(wallet.id, body);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 2000));
    assert.equal(res.body.owner_policy.policy_hash, policyDocumentHash(walletPolicySchema.parse(policy)));
    assert.equal(res.body.policy.counterparty_blocklist.length, 1000);
  });
});

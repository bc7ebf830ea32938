/**
 * Owner-signed policies for an owner who signed in with Solana (docs/adr/0012-owner-signed-policies.md), through
 * HTTP, the real signer with its own policy store, and PostgreSQL: the SIWS sign-in names the owner's base58 key
 * as the authority of their account's wallets; the owner signs the policy statement (policy/policy-statement.ts)
 * with that key; the signer takes it, refuses another key's, and enforces it.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from 'viem';
import { policyStatementBytes } from '../../../policy/policy-statement.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { newSolanaSigner, signInWithTreasuryPat, siwsSignInBody, type SolanaSigner } from '../../support/sign-in.js';

const usd = (n: number) => String(Math.round(n * 1_000_000));

describe('owner-signed policies of a SIWS owner (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let pat: string;
  const owner = newSolanaSigner();

  before(async () => {
    t = await startTestTreasury();
    ({ pat } = await signInWithTreasuryPat(t, await siwsSignInBody(t, owner)));
  });
  after(async () => {
    await t?.stop();
  });

  function statementBody(
    wallet: { address: string },
    policy: Record<string, unknown>,
    version: number,
    by: SolanaSigner,
  ) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const parsed = walletPolicySchema.parse(policy);
    const bytes = policyStatementBytes({ wallet: wallet.address, policy: parsed, version, issuedAt });
    return { policy, version, issued_at: issuedAt, signature: bytesToHex(ed25519.sign(bytes, by.secret)) };
  }

  it("names the SIWS owner's key as authority, takes their signed statement, refuses another key's, and the signer enforces it", async () => {
    const made = await t.request('POST', '/v1/wallets', { token: pat, body: { policy: { per_tx_cap_usd: '5' } } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const wallet = made.body;
    const read = await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: pat });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.deepEqual(read.body.owner_policy.authority, { kind: 'owner', address: owner.address });

    const intruder = newSolanaSigner();
    const forged = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, {
      token: pat,
      body: statementBody(wallet, { per_tx_cap_usd: '1000' }, 1, intruder),
    });
    assert.equal(forged.status, 403, JSON.stringify(forged.body));
    assert.equal(forged.body.error_code, 'policy_signature_invalid');

    const put = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, {
      token: pat,
      body: statementBody(wallet, { per_tx_cap_usd: '1' }, 1, owner),
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.owner_policy.state, 'owner_signed');
    assert.deepEqual(put.body.owner_policy.authority, { kind: 'owner', address: owner.address });

    const pay = (amount: number) =>
      t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: pat,
        body: {
          payment_requirements: paymentRequirements({
            amount: usd(amount),
            payTo: SELLER_ADDRESS,
            maxTimeoutSeconds: 300,
          }),
        },
      });
    assert.equal((await pay(0.5)).status, 200);
    // The API's copy of the policy loosened behind the owner's back: the signer still refuses.
    await t.db
      .knex('wallets')
      .where({ id: wallet.id })
      .update({ policy: { per_tx_cap_usd: '1000' } });
    t.app.services.pay.forgetWallet(wallet.id);
    const above = await pay(2);
    assert.equal(above.status, 403, JSON.stringify(above.body));
    assert.equal(above.body.decided_by, 'signer');
    assert.equal(above.body.rule, 'per_tx_cap_usd');
  });
});

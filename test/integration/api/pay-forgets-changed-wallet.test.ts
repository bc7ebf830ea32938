/**
 * A wallet changed through this API process is forgotten by its pay path (src/api/wallets/wallet-service.ts
 * `changed` → src/api/pay/pay-service.ts `forgetWallet`), so the next payment decides on a read, not on the
 * snapshot remembered before the change. Through HTTP, the real signer with its policy store, and PostgreSQL:
 * a payment decided on a stale remembered snapshot is signed in place before its write fails on the audit
 * chain (docs/adr/0006), and the signer's store counts that signature although it never leaves — so a
 * wallet paid, then its policy signed, then paid again, gave up a payment's worth of its signed day.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { policyTypedData } from '../../../policy/signed-policy.js';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInBody, signInWithTreasuryPat } from '../../support/sign-in.js';

const usd = (n: number) => String(Math.round(n * 1_000_000));

describe('the pay path forgets a wallet changed through this process (HTTP, signer policy store, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let owner: PrivateKeyAccount;
  let pat: string;

  before(async () => {
    t = await startTestTreasury();
    owner = privateKeyToAccount(generatePrivateKey());
    ({ pat } = await signInWithTreasuryPat(t, await signInBody(t, undefined, owner)));
  });
  after(async () => {
    await t?.stop();
  });

  const pay = (walletId: string, amount: number) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: usd(amount), maxTimeoutSeconds: 300 }) },
    });

  async function signPolicy(wallet: { id: string; address: string }, policy: Record<string, unknown>) {
    const issuedAt = Math.floor(Date.now() / 1000);
    const typed = policyTypedData({
      wallet: wallet.address,
      policy: walletPolicySchema.parse(policy),
      version: 1,
      issuedAt,
    });
    const body = { policy, version: 1, issued_at: issuedAt, signature: await owner.signTypedData(typed) };
    const res = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, { token: pat, body });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }

  it('a wallet paid, then its policy signed, then paid again: the signer counts each payment once', async () => {
    const made = await t.request('POST', '/v1/wallets', { token: pat, body: { policy: {} } });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const wallet = made.body as { id: string; address: string };
    assert.equal((await pay(wallet.id, 0.3)).status, 200); // its snapshot is now remembered
    await signPolicy(wallet, { daily_cap_usd: '1' }); // the signer's day counts the 0.30 already paid
    for (const n of [2, 3]) {
      const res = await pay(wallet.id, 0.3);
      assert.equal(res.status, 200, `payment ${n} of 0.30 under a $1 day: ${JSON.stringify(res.body)}`);
    }
    const over = await pay(wallet.id, 0.3);
    assert.equal(over.status, 403, JSON.stringify(over.body));
    assert.equal(over.body.rule, 'daily_cap_usd');
  });
});

/**
 * Capability caps through the API (HTTP, PostgreSQL, SoftHSM signer): on a wallet whose policy caps a
 * capability, a payment that names no capability is signed (the caps bound the payments that name one), the
 * named one above its cap is refused; with `capability_required: true` (set through PUT …/policy) the
 * unnamed payment is refused as before, with the same error code and rule. The field is stored only when true.
 */
import assert from 'node:assert/strict';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';

const CAPS = { 'search.*': '0.01' };

describe('capability caps and payments naming no capability (HTTP)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();
  let token: string;

  before(async () => {
    token = await mintAgentKey(t, 'capability-payer');
  });

  async function wallet(policy: Record<string, unknown>): Promise<string> {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  }
  const pay = (walletId: string, amountRaw: string, capability?: string) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: {
        payment_requirements: paymentRequirements({ amount: amountRaw, maxTimeoutSeconds: 300 }),
        ...(capability ? { capability } : {}),
      },
    });

  it('signs a payment naming no capability on a wallet with capability caps', async () => {
    const id = await wallet({ capability_cap_usd: CAPS });
    const unnamed = await pay(id, '50000');
    assert.equal(unnamed.status, 200, JSON.stringify(unnamed.body));
    const over = await pay(id, '20000', 'search.web');
    assert.equal(over.status, 403, JSON.stringify(over.body));
    assert.equal(over.body.error_code, 'policy_denied');
    assert.deepEqual(over.body.rules, ['capability_cap_usd']);
  });

  it('refuses it, as before, when the policy sets capability_required: true', async () => {
    const id = await wallet({ capability_cap_usd: CAPS, capability_required: false });
    const stored = await t.request('GET', `/v1/wallets/${id}/policy`, { token });
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    assert.equal('capability_required' in stored.body.policy, false);
    const set = await t.request('PUT', `/v1/wallets/${id}/policy`, {
      token,
      body: { capability_cap_usd: CAPS, capability_required: true },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.policy.capability_required, true);
    const refused = await pay(id, '1000');
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.reason, 'policy_denied');
    assert.equal(refused.body.error_code, 'policy_denied');
    assert.deepEqual(refused.body.rules, ['capability_cap_usd']);
    assert.equal((await pay(id, '1000', 'search.web')).status, 200);
  });
});

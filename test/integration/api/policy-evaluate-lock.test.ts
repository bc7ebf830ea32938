/**
 * POST /v1/wallets/{id}/policy/evaluate is a read: it answers while a payment of the same wallet holds the
 * wallet's exclusive lock (here a transaction of the test holds it, and a real payment waits behind it in
 * the API's per-wallet queue). Before, evaluate took that lock itself, so flooding evaluate stalled the
 * wallet's payments and a held lock stalled evaluate.
 */
import assert from 'node:assert/strict';
import { walletLockKey } from '../../../src/api/db/wallet-transaction.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

describe('policy/evaluate takes no wallet lock (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let token: string;

  before(async () => {
    token = await mintAgentKey(t, 'evaluate-lock');
  });

  it('answers promptly while the wallet lock is held and a payment waits for it; the payment then goes through and evaluate sees its spend', async () => {
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body as {
      id: string;
    };
    const evaluate = (signal?: AbortSignal) =>
      fetch(`${t.baseUrl}/v1/wallets/${w.id}/policy/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ to: SELLER, amount_usd: '0.4' }),
        ...(signal ? { signal } : {}),
      });

    const holder = await t.db.knex.transaction();
    let pay: Promise<{ status: number; body: any }> | undefined;
    try {
      await holder.raw(`SELECT pg_advisory_xact_lock(${walletLockKey(w.id).toString()})`);
      pay = t.request('POST', `/v1/wallets/${w.id}/pay`, {
        token,
        body: {
          payment_requirements: paymentRequirements({
            amount: '250000',
            maxTimeoutSeconds: 300,
            resource: 'https://api.example.com/x',
            description: 'x',
            mimeType: 'application/json',
          }),
        },
      });
      await new Promise((r) => setTimeout(r, 200)); // the payment is queued on the wallet and waits for the lock
      const started = Date.now();
      let res: Response;
      try {
        res = await evaluate(AbortSignal.timeout(3_000));
      } catch (err) {
        assert.fail(`evaluate did not answer within 3 s while the wallet lock was held (${(err as Error).name})`);
      }
      const body = (await res.json()) as { allowed: boolean; headroom: Record<string, string> };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual([body.allowed, body.headroom.daily_usd], [true, '0.6']);
      assert.ok(Date.now() - started < 3_000);
    } finally {
      await holder.commit();
    }
    const paid = await pay!;
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const after = (await (await evaluate()).json()) as { headroom: Record<string, string> };
    assert.equal(after.headroom.daily_usd, '0.35', 'the committed payment counts in the next evaluation');
  });
});

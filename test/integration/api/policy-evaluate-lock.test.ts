/**
 * POST /v1/wallets/{id}/policy/evaluate is a read: it answers while a payment of the same wallet holds the
 * wallet's exclusive lock (here a transaction of the test holds it, and a real payment waits behind it in
 * the API's per-wallet queue). Before, evaluate took that lock itself, so flooding evaluate stalled the
 * wallet's payments and a held lock stalled evaluate.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { walletLockKey } from '../../../src/api/db/wallet-transaction.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** Advisory lock requests PostgreSQL has not granted in this suite's own database (so only this test's). */
async function waitingLocks(db: Knex): Promise<number> {
  const rows = await db.raw(
    `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
       AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  return (rows.rows[0] as { n: number }).n;
}

/** Resolves once a payment waits for the held lock; fails after 20 s. */
async function untilPaymentWaits(db: Knex): Promise<void> {
  for (const until = Date.now() + 20_000; (await waitingLocks(db)) === 0;) {
    if (Date.now() > until) assert.fail('the payment never waited for the wallet lock');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('policy/evaluate takes no wallet lock (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let token: string;

  before(async () => {
    token = await mintAgentKey(t, 'evaluate-lock');
  });

  it('answers while the wallet lock is held and a payment waits for it; the payment then goes through and evaluate sees its spend', async () => {
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
      // The payment waits for the lock: PostgreSQL shows its request, not granted (polled, not a fixed sleep).
      await untilPaymentWaits(holder);
      // Order, not a wall-clock budget: evaluate answers while the lock is held and the payment still waits for
      // it (the lock is released only in the `finally` below, so an evaluate that took the lock would never
      // answer). The 20 s abort only ends a failing run well before mocha's time-out.
      let res: Response;
      try {
        res = await evaluate(AbortSignal.timeout(20_000));
      } catch (err) {
        assert.fail(`evaluate did not answer while the wallet lock was held (${(err as Error).name})`);
      }
      const body = (await res.json()) as { allowed: boolean; headroom: Record<string, string> };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual([body.allowed, body.headroom.daily_usd], [true, '0.6']);
      assert.equal(await waitingLocks(holder), 1, 'the payment still waits for the lock evaluate did not take');
    } finally {
      await holder.commit();
    }
    const paid = await pay!;
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const after = (await (await evaluate()).json()) as { headroom: Record<string, string> };
    assert.equal(after.headroom.daily_usd, '0.35', 'the committed payment counts in the next evaluation');
  });
});

/**
 * What the pay path remembers of a wallet (its snapshot: chain head, totals) after a write that did not come from
 * the group commit — a payment decided under a capped PAT's lock, a reservation given back after the signer refused
 * it, the retry of an Idempotency-Key (decided alone, and not remembered), an expired reservation the sweep gave
 * back. Each such write moves the wallet's audit chain: the wallet's next payment must be decided on the new head,
 * so its shared statement is written at once — never refused by the chain's UNIQUE and taken again
 * (`treasury_pay_conflict_retries_total`). A refusal would also have forgotten a capped PAT's total and sent the
 * agent's other wallets under the lock in turn, each leaving the same stale memory: measured in `npm run bench`'s
 * phase (d) as runs at half the rate with a p99 of 200–275 ms (docs/performance.md, "A capped PAT's payments").
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, startTestTreasury, useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { useInSuite } from '../../support/late-bound.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { startTestSigner } from '../../support/signer-harness.js';
import { installPayFaultHooks } from '../../../src/api/pay/pay-fault-hooks.js';

/** Pays `amount` (atomic USDC) from `walletId` with `token`, under `idempotencyKey` when one is given. */
const pay = (t: TestTreasury, token: string, walletId: string, amount: string, idempotencyKey?: string) =>
  t.request('POST', `/v1/wallets/${walletId}/pay`, {
    token,
    body: { payment_requirements: paymentRequirements({ amount }) },
    ...(idempotencyKey ? { headers: { 'Idempotency-Key': idempotencyKey } } : {}),
  });

/** Writes refused and taken again so far (`treasury_pay_conflict_retries_total`). */
const conflictRetries = async (t: TestTreasury) =>
  Number(
    ((await t.request('GET', '/metrics')).body as string).match(
      /treasury_pay_conflict_retries_total\{kind="pay"\} (\d+)/,
    )?.[1] ?? 0,
  );

/** A signed-in owner's wallet and two agent PATs of its Treasury: one without a cap, one with a 10 USD daily cap. */
async function walletAndPats(t: TestTreasury): Promise<{ wallet: string; uncapped: string; capped: string }> {
  const { session } = await signInWithNewKey(t);
  const mint = async (body: Record<string, unknown>) =>
    (await t.request('POST', '/v1/pats', { token: session, body })).body.pat as string;
  const treasuryPat = await mint({ scope_type: 'treasury' });
  const uncapped = await mint({ scope_type: 'agent' });
  const capped = await mint({ scope_type: 'agent', daily_cap_usd: '10' });
  const wallet = (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: {} })).body.id as string;
  return { wallet, uncapped, capped };
}

describe('pay path: what it remembers of a wallet after writes outside the group commit (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  // The signer's per-signature maximum below what the wallets' policies allow: a payment it refuses is given back.
  const t = useTestTreasury({ signerEnv: { TREASURY_SIGNER_MAX_PER_SIGNATURE: '1000000' } });

  it("a payment decided under a capped PAT's lock: the wallet's next payment on the group commit is written at once", async () => {
    const { wallet, uncapped, capped } = await walletAndPats(t);
    const before = await conflictRetries(t);
    // Paid through the group commit: the process remembers the wallet's snapshot.
    assert.equal((await pay(t, uncapped, wallet, '50000')).status, 200);
    // The capped PAT's first payment in this process: decided under its lock, written in a transaction of its own.
    assert.equal((await pay(t, capped, wallet, '50000')).status, 200);
    // Through the group commit again, on what the process remembers of the wallet.
    const next = await pay(t, uncapped, wallet, '50000');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(await conflictRetries(t), before, 'no statement refused and taken again');
    assert.equal((await verifyAuditChain(t.db.knex, wallet)).ok, true);
  });

  it("a reservation given back after the signer refused it: the wallet's next payment is written at once", async () => {
    const token = await mintAgentKey(t, 'memory-after-release');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '100' } } })).body
      .id as string;
    assert.equal((await pay(t, token, wallet, '50000')).status, 200);
    // Over the signer's per-signature maximum: refused, and the reservation is given back (a `payment.released` row).
    assert.equal((await pay(t, token, wallet, '1000001')).status, 403);
    for (
      let i = 0;
      i < 100 &&
      (await t.db.knex('audit_events').where({ chain_key: wallet, event_type: 'payment.released' }).first()) ===
        undefined;
      i++
    )
      await sleep(20);
    const before = await conflictRetries(t);
    const next = await pay(t, token, wallet, '50000');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(await conflictRetries(t), before, 'no statement refused and taken again');
    assert.equal((await verifyAuditChain(t.db.knex, wallet)).ok, true);
  });
});

describe('pay path: what it remembers of a wallet after a payment decided alone (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  it("an Idempotency-Key retried after the signer was down: the wallet's next payment is written at once", async () => {
    const token = await mintAgentKey(t, 'memory-after-alone');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '100' } } })).body
      .id as string;
    assert.equal((await pay(t, token, wallet, '50000')).status, 200);

    // The signer is down (a restart; its token directory kept): the payment under the key is reserved, then given back.
    const exited = new Promise((resolve) => t.signer.child.once('exit', resolve));
    t.signer.child.kill('SIGTERM');
    await exited;
    const lost = await pay(t, token, wallet, '50000', 'retried-after-signer-restart');
    assert.equal(lost.status, 503, JSON.stringify(lost.body));
    const again = await startTestSigner({ dir: t.signer.dir });
    try {
      // Paid through the group commit: the process remembers the wallet's snapshot.
      const first = await pay(t, token, wallet, '50000');
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const before = await conflictRetries(t);
      // The key's retry: a key this process has seen is decided alone, on a read, in a statement of its own.
      const retried = await pay(t, token, wallet, '50000', 'retried-after-signer-restart');
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      // Through the group commit again: decided on what the process remembers, which must count the retry's row.
      const next = await pay(t, token, wallet, '50000');
      assert.equal(next.status, 200, JSON.stringify(next.body));
      assert.equal(await conflictRetries(t), before, 'no statement refused and taken again');
      assert.equal((await verifyAuditChain(t.db.knex, wallet)).ok, true);
    } finally {
      await again.stop();
    }
  });
});

describe('pay path: what it remembers of a wallet after the sweep gives back an expired reservation (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let aheadMs = 0;
  let stopAfterReserve = false;
  // In this process, the pay path's crash point after a reservation committed: the payment stops there once, as if
  // its process had died, and its reservation is left for the sweep. Installed only while the app is built.
  const t = useInSuite('the test treasury', async () => {
    installPayFaultHooks({
      afterReserve: () => {
        if (!stopAfterReserve) return;
        stopAfterReserve = false;
        throw new Error('stopped after reserving');
      },
    });
    try {
      return await startTestTreasury({ clock: () => new Date(Date.now() + aheadMs) });
    } finally {
      installPayFaultHooks({});
    }
  });

  it("the sweep's release: the wallet's next payment is written at once", async () => {
    const { wallet, uncapped, capped } = await walletAndPats(t);
    // A capped PAT's first payment is reserved under its lock before the signer is asked; it stops there.
    stopAfterReserve = true;
    assert.equal((await pay(t, capped, wallet, '50000')).status, 500);
    assert.deepEqual(
      (await t.db.knex('authorizations').where({ wallet_id: wallet })).map((r) => r.status),
      ['reserved'],
    );
    // Paid through the group commit: the process remembers the wallet's snapshot, the reservation counted.
    assert.equal((await pay(t, uncapped, wallet, '50000')).status, 200);

    // Five minutes on, the reservation has expired. (In the last five minutes of a UTC day the remembered snapshot
    // ends with its day anyway, and this test cannot tell the difference.)
    aheadMs = 5 * 60_000;
    assert.equal(await t.app.services.expiredReservations.sweep(), 1);
    const before = await conflictRetries(t);
    const next = await pay(t, uncapped, wallet, '50000');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(await conflictRetries(t), before, 'no statement refused and taken again');
    assert.equal((await verifyAuditChain(t.db.knex, wallet)).ok, true);
  });
});

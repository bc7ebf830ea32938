/**
 * Reserve, then sign: when the signer cannot sign, the reservation made under the wallet lock is released —
 * the spend is given back (the daily cap's headroom is whole again), the row is marked released with its
 * Idempotency-Key freed, the release is in the audit chain, and no signature exists anywhere. The signer
 * killed in the middle of a storm of payments and started again: never a 500, every payment that got no
 * signature gave its spend back, and the same API process signs again once the signer is back. One payment
 * of a hot wallet refused by the signer (403 `signer_refused`, naming the signer's rule) while the wallet's
 * next payments were decided on top of it: it is written unsigned in its place and released, the others
 * are signed, and the chain has no gap.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { startTestSigner } from '../../support/signer-harness.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { daySpentMicro } from '../../support/spend-totals.js';

/** Hooks for one describe block: its own Treasury (API, signer, database) and an agent's API key. */
function ownTreasury(ownerId: string, signerEnv?: Record<string, string>): { t: TestTreasury; token: string } {
  const ctx = {} as { t: TestTreasury; token: string };
  before(async () => {
    ctx.t = await startTestTreasury(signerEnv ? { signerEnv } : {});
    ctx.token = await mintAgentKey(ctx.t, ownerId);
  });
  after(async () => {
    await ctx.t?.stop();
  });
  return ctx;
}

describe('pay path when the signer fails', function () {
  this.timeout(120_000);
  const own = ownTreasury('payer');

  it('a reservation whose signature never came is released: spend given back, audited, key reusable', async () => {
    const { t, token } = own;
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body as {
      id: string;
    };
    const body = { payment_requirements: paymentRequirements({ amount: '600000' }) };
    const ok = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));

    await t.signer.stop();
    const failed = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: '400000' }) },
      headers: { 'Idempotency-Key': 'lost-signer-1' },
    });
    assert.equal(failed.status, 503, JSON.stringify(failed.body));
    assert.equal(failed.body.error_code, 'signer_unavailable');

    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id }).orderBy('created_at');
    assert.deepEqual(
      rows.map((r) => r.status),
      ['signed', 'released'],
    );
    assert.equal(rows[1].signature, null);
    assert.equal(rows[1].idempotency_key, null, 'the Idempotency-Key is free for a retry');
    const released = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.released' });
    assert.equal(released.length, 1);
    assert.equal(released[0].payload.authorization_id, rows[1].id);

    // Only the signed 0.6 still counts: 0.4 fits under the 1 USD daily cap again.
    assert.equal(await daySpentMicro(t.db.knex, w.id), '600000');
    const dry = await t.request('POST', `/v1/wallets/${w.id}/policy/evaluate`, {
      token,
      body: { to: SELLER_ADDRESS, amount_usd: '0.4' },
    });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.allowed, true);

    // The same key can be used again; it reserves anew (and fails again while the signer is down).
    const retry = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: '400000' }) },
      headers: { 'Idempotency-Key': 'lost-signer-1' },
    });
    assert.equal(retry.status, 503);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id, status: 'released' })).length, 2);
  });
});

describe('pay path when the signer refuses one payment of a hot wallet', function () {
  this.timeout(120_000);
  // The signer's own bound (raw units) is below what the wallet's policy allows: an operator's mismatch.
  const own = ownTreasury('hot', { TREASURY_SIGNER_MAX_VALUE: '500000' });

  it('the refused payment is written unsigned in its place and released; the payments decided on top of it are signed; the chain has no gap', async () => {
    const { t, token } = own;
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '10' } } })).body as {
      id: string;
    };
    const amounts = ['100000', '100000', '100000', '900000', '100000', '100000', '100000', '100000'];
    const answers = await Promise.all(
      amounts.map((amount) =>
        t.request('POST', `/v1/wallets/${w.id}/pay`, {
          token,
          body: { payment_requirements: paymentRequirements({ amount }) },
        }),
      ),
    );
    answers.forEach((r, i) => assert.equal(r.status, amounts[i] === '900000' ? 403 : 200, JSON.stringify(r.body)));
    const refusal = answers[amounts.indexOf('900000')]!.body;
    assert.equal(refusal.error_code, 'signer_refused', JSON.stringify(refusal));
    assert.equal(refusal.rule, 'value_max', "the answer names the signer's rule");
    assert.equal(refusal.signature, undefined);

    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.equal(rows.length, 8, 'every decision was written, the refused one too');
    const refused = rows.filter((r) => r.status !== 'signed');
    assert.equal(refused.length, 1);
    assert.equal(refused[0].amount_micro, '900000');
    assert.equal(refused[0].signature, null);
    for (const r of answers.filter((a) => a.status === 200))
      assert.equal(rows.find((x) => x.id === r.body.authorization_id)?.signature, r.body.signature);
    for (
      let i = 0;
      i < 100 && (await t.db.knex('authorizations').where({ id: refused[0].id }).first()).status !== 'released';
      i++
    )
      await sleep(20);
    assert.equal((await t.db.knex('authorizations').where({ id: refused[0].id }).first()).status, 'released');
    assert.equal(await daySpentMicro(t.db.knex, w.id), '700000', 'only the signed payments count');
    const events = (await t.db.knex('audit_events').where({ chain_key: w.id }).orderBy('seq')).map((e) => e.event_type);
    assert.equal(events.filter((e) => e === 'payment.reserved').length, 8);
    assert.equal(events.filter((e) => e === 'payment.released').length, 1);
    const chain = await verifyAuditChain(t.db.knex, w.id);
    assert.equal(chain.ok, true, JSON.stringify(chain));
    // Decided on top of the refused one: at least one signed payment's audit row follows it in the chain.
    const refusedSeq = (
      await t.db
        .knex('audit_events')
        .where({ chain_key: w.id, event_type: 'payment.reserved' })
        .whereRaw("payload->>'authorization_id' = ?", [refused[0].id])
        .first()
    ).seq;
    const later = await t.db
      .knex('audit_events')
      .where({ chain_key: w.id, event_type: 'payment.reserved' })
      .where('seq', '>', refusedSeq);
    assert.ok(later.length > 0, 'payments were decided after the refused one');
  });
});

describe('pay path when the signer dies mid-storm', function () {
  this.timeout(120_000);
  const own = ownTreasury('storm');

  it('the signer killed mid-storm and started again: 200, 403 or 503 signer_unavailable, spend given back for every unsigned payment, signing resumes', async () => {
    const { t, token } = own;
    const wallets = await Promise.all(
      [1, 2, 3].map(
        async () =>
          (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '2' } } })).body as {
            id: string;
          },
      ),
    );
    const pay = async (i: number) => ({
      wallet: wallets[i % 3]!.id,
      ...(await t.request('POST', `/v1/wallets/${wallets[i % 3]!.id}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount: '100000' }) },
      })),
    });
    const storm = Promise.all(Array.from({ length: 40 }, (_, i) => sleep(i * 5).then(() => pay(i))));
    // Kill it once payments are flowing (a few signed), while the rest are on their way; 20 more come after it died
    // (on a loaded machine the whole storm could otherwise be signed before the kill lands).
    const signedSoFar = async () =>
      Number(
        (
          await t.db
            .knex('authorizations')
            .where({ status: 'signed' })
            .whereIn(
              'wallet_id',
              wallets.map((w) => w.id),
            )
            .count({ n: '*' })
        )[0]?.n ?? 0,
      );
    for (let i = 0; i < 500 && (await signedSoFar()) < 5; i++) await sleep(5);
    t.signer.child.kill('SIGKILL');
    await new Promise<void>((resolve) =>
      t.signer.child.exitCode !== null || t.signer.child.signalCode !== null
        ? resolve()
        : t.signer.child.once('exit', () => resolve()),
    );
    const late = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(40 + i)));
    const answers = [...(await storm), ...late];
    const again = await startTestSigner({ dir: t.signer.dir });
    try {
      const counts = new Map<string, number>();
      for (const r of answers)
        counts.set(
          `${r.status} ${r.body.error_code ?? ''}`.trim(),
          (counts.get(`${r.status} ${r.body.error_code ?? ''}`.trim()) ?? 0) + 1,
        );
      console.log(`      answers: ${[...counts].map(([k, n]) => `${k} × ${n}`).join(', ')}`);
      for (const r of answers)
        assert.ok(
          r.status === 200 || r.status === 403 || (r.status === 503 && r.body.error_code === 'signer_unavailable'),
          JSON.stringify(r.body),
        );
      assert.ok(
        answers.some((r) => r.status === 503),
        'some payments met the dead signer',
      );
      assert.ok(
        answers.some((r) => r.status === 200),
        'some were signed before',
      );
      for (const w of wallets) {
        const rows = await t.db.knex('authorizations').where({ wallet_id: w.id });
        assert.deepEqual(
          rows.filter((r) => r.status === 'reserved'),
          [],
          'no reservation is left hanging',
        );
        const signed = rows.filter((r) => r.status === 'signed');
        for (const r of answers.filter((a) => a.wallet === w.id && a.status === 200)) {
          assert.equal(
            signed.find((x) => x.id === r.body.authorization_id)?.signature,
            r.body.signature,
            'a released signature is the recorded one',
          );
        }
        const day = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first();
        assert.equal(
          String(day?.spent_micro ?? 0),
          String(signed.reduce((sum, x) => sum + BigInt(x.amount_micro), 0n)),
          'only signed payments count',
        );
        const chain = await verifyAuditChain(t.db.knex, w.id);
        assert.equal(chain.ok, true, JSON.stringify(chain));
        // The same API process signs again through the restarted signer.
        const after = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
          token,
          body: { payment_requirements: paymentRequirements({ amount: '1000' }) },
        });
        assert.equal(after.status, 200, JSON.stringify(after.body));
      }
    } finally {
      await again.stop();
    }
  });
});

describe("pay path when the signer's own limits refuse a payment", function () {
  this.timeout(120_000);
  // The signer's limits are its own (signer/config/signer-config.ts): below what the wallet's policy allows.
  const own = ownTreasury('limited', {
    TREASURY_SIGNER_MAX_PER_SIGNATURE: '1000000',
    TREASURY_SIGNER_WALLET_MAX_PER_HOUR: '1000000',
    TREASURY_SIGNER_WALLET_MAX_PER_DAY: '2000000',
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '100',
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: '1000',
  });

  it("a pay past the signer's hourly ceiling is 429 signer_limit_exceeded with the limit and Retry-After; its spend is given back; another wallet pays", async () => {
    const { t, token } = own;
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '100' } } })).body as {
      id: string;
    };
    const pay = (wallet: string, amount: string) =>
      t.request('POST', `/v1/wallets/${wallet}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount }) },
      });
    assert.equal((await pay(w.id, '400000')).status, 200);
    assert.equal((await pay(w.id, '400000')).status, 200);
    const refused = await pay(w.id, '400000');
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'signer_limit_exceeded');
    assert.equal(refused.body.limit, 'wallet_amount_hour');
    assert.equal(refused.body.window_seconds, 3600);
    assert.equal(refused.body.max, '1000000');
    assert.equal(refused.body.headroom, '200000');
    assert.ok(refused.body.retry_after_seconds > 3500, JSON.stringify(refused.body));
    assert.equal(refused.headers.get('retry-after'), String(refused.body.retry_after_seconds));
    assert.equal(refused.body.signature, undefined);

    for (
      let i = 0;
      i < 100 &&
      (await t.db.knex('authorizations').where({ wallet_id: w.id }).whereNot({ status: 'signed' }).first())?.status !==
        'released';
      i++
    )
      await sleep(20);
    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id }).orderBy('created_at');
    assert.deepEqual(rows.map((r) => r.status).sort(), ['released', 'signed', 'signed']);
    assert.equal(rows.find((r) => r.status === 'released').signature, null);
    assert.equal(await daySpentMicro(t.db.knex, w.id), '800000', 'the refused payment left no spend');
    assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);
    // What is left of the signer's hour still signs; another wallet is untouched.
    assert.equal((await pay(w.id, '200000')).status, 200);
    const other = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '100' } } }))
      .body as { id: string };
    assert.equal((await pay(other.id, '1000000')).status, 200);
  });

  it("a pay over the signer's per-signature maximum is 403 signer_refused naming value_max / per_signature; no spend remains", async () => {
    const { t, token } = own;
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '100' } } })).body as {
      id: string;
    };
    const refused = await t.request('POST', `/v1/wallets/${w.id}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: '1000001' }) },
    });
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'signer_refused');
    assert.equal(refused.body.rule, 'value_max');
    assert.equal(refused.body.limit, 'per_signature');
    assert.equal(refused.body.max, '1000000');
    for (
      let i = 0;
      i < 100 && (await t.db.knex('authorizations').where({ wallet_id: w.id }).first())?.status !== 'released';
      i++
    )
      await sleep(20);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id }).first()).status, 'released');
    const day = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first();
    assert.equal(String(day?.spent_micro ?? 0), '0');
  });
});

/**
 * The pay path through HTTP with the signer process itself on TREASURY_KEY_BACKEND=aws-kms, talking to
 * the KMS emulator (ops/kms-emulator/, a test double, run in this test process) through the real SDK,
 * with credentials from the SDK's default chain (AWS_* variables in the signer's environment): wallets are KMS keys, payments recover to the wallet; under a
 * throttling burst every payment is signed or refused 503 `signer_unavailable` (never a 500), and no
 * digest is signed twice; an unreachable KMS answers 503 fast and /readyz says so; a stalled Sign is
 * retried after its attempt timeout, and a KMS that stays stalled ends at the deadline; a revoked wallet's
 * key is disabled and scheduled for deletion in KMS. A Solana wallet is a KMS Ed25519 key: its payment's
 * transaction is signed there and settles through the local x402 facilitator on the offline Solana chain.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { startKmsEmulator, type KmsEmulator } from '../../../ops/kms-emulator/kms-emulator.js';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import type { Eip3009Authorization } from '../../../src/api/pay/payment-authorization.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { findFreePort } from '../../support/signer-harness.js';
import { readMetric } from '../signer/signer-test-helpers.js';
import type { Address } from '@solana/kit';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { postJson } from '../../support/post-json.js';

// The signer's KMS deadline and attempt time-out. Every KMS call shares them, key creation and lookups too,
// and the emulator answers from this very test process: on a loaded 2-core machine a 700 ms attempt timed out
// on an ordinary ListKeys or Sign (then a Sign is retried and KMS signs the digest twice). The fault tests
// need only that an attempt ends well before the deadline, so both are long enough that load alone never
// reaches them; a stalled or unreachable KMS still meets them.
const DEADLINE_MS = 8000;
const ATTEMPT_TIMEOUT_MS = 3000;

describe('pay path on AWS KMS (signer process, KMS emulator, real SDK)', function () {
  this.timeout(180_000);
  let kms: KmsEmulator;
  let t: TestTreasury;
  let token: string;
  let dir: string;
  let metricsPort: number;
  let solana: LocalSolana;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    metricsPort = await findFreePort();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-pay-'));
    kms = await startKmsEmulator({ logger: pino({ level: 'silent' }) });
    const { AWS_ENDPOINT_URL_KMS: _viaConfigInstead, ...credentials } = kms.clientEnv();
    t = await startTestTreasury({
      signerEnv: {
        ...credentials,
        TREASURY_KEY_BACKEND: 'aws-kms',
        TREASURY_KMS_REGION: kms.region,
        TREASURY_KMS_ENDPOINT: kms.url,
        AWS_EC2_METADATA_DISABLED: 'true',
        TREASURY_KMS_TOMBSTONE_FILE: path.join(dir, 'kms-tombstones'),
        TREASURY_KMS_DEADLINE_MS: String(DEADLINE_MS),
        TREASURY_KMS_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
        TREASURY_KMS_SIGN_RATE_PER_SECOND: '0',
        TREASURY_SIGNER_METRICS_PORT: String(metricsPort),
      },
      extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl },
    });
    token = await mintAgentKey(t, 'kms-payer');
  });
  after(async () => {
    await t?.stop();
    await kms?.close();
    await solana?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  // Faults off, then wait until /readyz sees KMS answer: on a loaded machine a fault's timed-out attempts can leave
  // the signer's breaker open (signer/backends/aws-kms/kms-breaker.ts), and a health check is what closes it.
  afterEach(async () => {
    kms?.faults.reset();
    for (let i = 0; i < 100 && (await t.request('GET', '/readyz')).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 100));
  });

  async function wallet() {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1000' } } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; address: string };
  }
  const pay = (walletId: string, amountRaw = '10000') =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: amountRaw, maxTimeoutSeconds: 300 }) },
    });
  function recovered(body: { authorization: Eip3009Authorization; signature: string }) {
    return recoverAuthorizationSigner(body.authorization, body.signature);
  }

  it('the signer reports aws-kms; wallets are KMS keys; 16 concurrent payments recover to the wallet, one KMS Sign each', async () => {
    assert.equal((await t.signer.client.health()).backend, 'aws-kms');
    assert.equal((await t.request('GET', '/readyz')).status, 200);
    const before = kms.stats.snapshot();
    const w = await wallet();
    const after = kms.stats.snapshot();
    assert.equal((after.succeeded.CreateKey ?? 0) - (before.succeeded.CreateKey ?? 0), 1);
    const answers = await Promise.all(Array.from({ length: 16 }, () => pay(w.id)));
    for (const res of answers) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(await recovered(res.body), w.address);
    }
    const signed = kms.stats.snapshot();
    assert.equal(signed.signatures - after.signatures, 16);
    assert.equal(signed.distinctDigestsSigned - after.distinctDigestsSigned, 16);
  });

  it('a throttling burst: every payment signed or refused 503 signer_unavailable, never a 500; no digest signed twice', async () => {
    const w = await wallet();
    const before = kms.stats.snapshot();
    // 2/s with a burst of 2 over the deadline is at most 2 + 2 × 8 = 18 signatures: some of the 40 are refused.
    kms.faults.rateLimit({ perSecond: 2, burst: 2, operations: ['Sign'] });
    const answers = await Promise.all(Array.from({ length: 40 }, () => pay(w.id)));
    const statuses = answers.map((r) => r.status);
    assert.deepEqual(
      [...new Set(statuses)].filter((s) => s !== 200 && s !== 503),
      [],
      JSON.stringify(answers.find((r) => r.status !== 200 && r.status !== 503)?.body),
    );
    for (const r of answers.filter((x) => x.status === 503)) assert.equal(r.body.error_code, 'signer_unavailable');
    const ok = statuses.filter((s) => s === 200).length;
    assert.ok(ok >= 2 && ok < 40, `${ok} of 40 signed at 2/s within a ${DEADLINE_MS} ms deadline`);
    const after = kms.stats.snapshot();
    // Throttled requests were not carried out: KMS signed once per signed payment, plus at most one for each
    // attempt the signer gave up waiting on (timeout) — KMS may have signed that one after the abort, and the
    // signer never sent it again (it is not idempotent) nor let its signature out.
    const gaveUpWaiting = await readMetric(
      metricsPort,
      'treasury_signer_kms_request_duration_seconds_count',
      'op="sign",outcome="timeout"',
    );
    const extra = after.signatures - before.signatures - ok;
    assert.ok(
      extra >= 0 && extra <= gaveUpWaiting,
      `${after.signatures - before.signatures} KMS signatures for ${ok} signed payments; ${gaveUpWaiting} attempts timed out`,
    );
    assert.equal(
      after.signatures - after.distinctDigestsSigned,
      before.signatures - before.distinctDigestsSigned,
      'no digest signed twice',
    );
    // The signer counted what happened (treasury_signer_kms_*).
    assert.ok((await readMetric(metricsPort, 'treasury_signer_kms_throttles_total', 'op="sign"')) > 0);
    assert.ok((await readMetric(metricsPort, 'treasury_signer_kms_retries_total', 'reason="throttled"')) > 0);
    assert.equal(await readMetric(metricsPort, 'treasury_signer_kms_failures_total', 'op="sign"'), 40 - ok);
    assert.ok(
      (await readMetric(metricsPort, 'treasury_signer_kms_request_duration_seconds_count', 'outcome="ok"')) >= ok,
    );
    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id });
    assert.equal(rows.filter((r) => r.status === 'signed').length, ok);
    assert.equal(
      rows.filter((r) => r.status === 'released').length,
      40 - ok,
      'every refused payment gave its spend back',
    );
  });

  it('KMS unreachable: payments answer 503 fast and /readyz says the signer is not ready; both recover with KMS', async () => {
    const w = await wallet();
    kms.faults.unreachable('refuse');
    const started = Date.now();
    const res = await pay(w.id);
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'signer_unavailable');
    // Fast: a refused connection is not waited on until the deadline (8 s, far above what load adds).
    assert.ok(Date.now() - started < DEADLINE_MS / 2, `answered in ${Date.now() - started} ms`);
    const ready = await t.request('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.signer, false);
    // KMS comes back once the refusals were seen (an event, not a timer that a slow answer could outlast);
    // /readyz follows eventually: polled for up to 30 s.
    kms.faults.reachable();
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && (await t.request('GET', '/readyz')).status !== 200) await sleep(200);
    assert.equal((await t.request('GET', '/readyz')).status, 200);
    assert.equal((await pay(w.id)).status, 200);
  });

  it('a stalled Sign is aborted and retried within the deadline; a KMS that stays stalled ends the payment at the deadline', async () => {
    const w = await wallet();
    const before = kms.stats.snapshot();
    kms.faults.stall({ operations: ['Sign'], count: 1 });
    const once = await pay(w.id);
    assert.equal(once.status, 200, JSON.stringify(once.body));
    assert.equal(await recovered(once.body), w.address);
    assert.equal(kms.stats.received('Sign') - (before.received.Sign ?? 0), 2, 'the stalled attempt, then its retry');
    kms.faults.stall({ operations: ['Sign'] });
    const started = Date.now();
    const stuck = await pay(w.id);
    const elapsed = Date.now() - started;
    assert.equal(stuck.status, 503, JSON.stringify(stuck.body));
    // At the deadline: not before it, and before one more attempt could have run past it.
    assert.ok(elapsed >= DEADLINE_MS - 100 && elapsed < DEADLINE_MS + ATTEMPT_TIMEOUT_MS, `ended after ${elapsed} ms`);
  });

  it('revoking a wallet disables its KMS key and schedules its deletion', async () => {
    const w = await wallet();
    const before = kms.stats.snapshot();
    const revoked = await t.request('POST', `/v1/wallets/${w.id}/revoke`, { token, body: { abandon_balance: true } });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const after = kms.stats.snapshot();
    assert.equal((after.succeeded.DisableKey ?? 0) - (before.succeeded.DisableKey ?? 0), 1);
    assert.equal((after.succeeded.ScheduleKeyDeletion ?? 0) - (before.succeeded.ScheduleKeyDeletion ?? 0), 1);
  });

  it('a Solana wallet is a KMS Ed25519 key: its payment settles through the facilitator for exactly the price', async () => {
    const created = await t.request('POST', '/v1/wallets', { token, body: { chain: 'solana-devnet' } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const row = await t.db.knex('wallets').where({ id: created.body.id }).first();
    assert.match(row.wallet_key_ref, /^kms:v1:ed25519:/);
    await solana.faucet.fundUsdc(created.body.address as Address, 100_000n);
    const payTo = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' as Address;
    await solana.faucet.fundUsdc(payTo, 0n);
    const requirements = {
      scheme: 'exact',
      network: solana.network,
      asset: solana.mint,
      amount: '10000',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: solana.feePayer },
    };
    const paid = await t.request('POST', `/v1/wallets/${created.body.id}/pay`, {
      token,
      body: { payment_requirements: requirements },
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const settled = await postJson(`${solana.facilitatorUrl}/settle`, {
      x402Version: 2,
      paymentPayload: { x402Version: 2, accepted: requirements, payload: { transaction: paid.body.transaction } },
      paymentRequirements: requirements,
    });
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
    const balance = await t.request('GET', `/v1/wallets/${created.body.id}/balance`, { token });
    assert.equal(balance.body.balance_raw, '90000');
  });
});

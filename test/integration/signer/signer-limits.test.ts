/**
 * The signer's own limits, through its socket, on a real SoftHSM token: with its defaults a signature over
 * 100 USDC is refused (EIP-3009 value or Permit2 signed maximum), naming `value_max` / `per_signature` as
 * fields; a wallet past its rolling amount or signature ceiling is refused with `limit_exceeded`, the limit,
 * its headroom and when to retry, while another wallet still signs; concurrent requests cannot overshoot a
 * ceiling; no protocol message can change a limit; a refused request never reaches C_Sign, and each refusal
 * is counted by limit in `treasury_signer_limit_refusals_total`; with a state file the windows survive a
 * restart (SIGTERM or kill -9), a Solana wallet's (saved under its base58 address) as an EVM wallet's, without
 * one they start empty.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { address } from '@solana/kit';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { DEVNET, PAY_TO, paymentMessage } from '../../builders/solana-payment-message.js';
import { findFreePort, startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { lateBound } from '../../support/late-bound.js';
import {
  BASE_SEPOLIA_USDC as DOMAIN,
  buildAuthorization,
  openRawConnection,
  readMetric,
  walletOps,
} from './signer-test-helpers.js';

type Details = {
  rule?: string;
  limit?: string;
  max?: string;
  headroom?: string;
  window_seconds?: number;
  retry_after_seconds?: number;
};

/** The error a signer call was refused with (fails the test when it was signed). */
async function refusal(call: Promise<unknown>): Promise<{ code: string; details: Details | undefined }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof SignerError) return { code: err.code, details: err.details };
    throw err;
  }
  assert.fail('the signer signed a request it should have refused');
}

/**
 * A signer on its own limits with `env` over them and its metrics on a free port, started for the enclosing
 * suite, and wallet operations on a new account of it; `metric` reads one of its metrics.
 */
function useLimitedSigner(env: Record<string, string>) {
  let signer: TestSigner | undefined;
  let port = 0;
  let ops: ReturnType<typeof walletOps> | undefined;
  before(async () => {
    port = await findFreePort();
    signer = await startTestSigner({
      limits: 'signer_defaults',
      env: { TREASURY_SIGNER_METRICS_PORT: String(port), ...env },
    });
    ops = walletOps(signer, (await signer.client.createAccountKey()).account_key_ref);
  });
  after(async () => {
    await signer?.stop();
  });
  return {
    signer: lateBound(() => signer, 'the signer'),
    ops: lateBound(() => ops, 'the wallet operations'),
    metric: (name: string, labels: string) => readMetric(port, name, labels),
  };
}

describe('treasury-signer limits: defaults', function () {
  this.timeout(120_000);
  // No limit variables at all: the signer's own defaults.
  const { ops, metric } = useLimitedSigner({});

  it('signs 100 USDC and refuses 100.000001 USDC in one signature, EIP-3009 and Permit2 alike, naming the limit as fields', async () => {
    const w = await ops.wallet();
    await ops.sign(w, '100000000');
    const signs = await metric('treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"');
    for (const refused of [
      await refusal(ops.sign(w, '100000001')),
      await refusal(ops.permit(w, '100000001')),
      await refusal(ops.sign(w, '1000000000000')),
    ]) {
      assert.equal(refused.code, 'invariant_violation');
      assert.deepEqual(refused.details, { rule: 'value_max', limit: 'per_signature', max: '100000000' });
    }
    assert.equal(
      await metric('treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"'),
      signs,
      'nothing reached C_Sign',
    );
    assert.equal(await metric('treasury_signer_limit_refusals_total', 'limit="per_signature"'), 3);
  });

  it('keeps a default rolling ceiling per wallet: two signatures of 100 USDC pass in the hour, a third is refused, another wallet signs', async () => {
    const w = await ops.wallet();
    const other = await ops.wallet();
    // 1,000 USDC a day by default, 250 an hour: the third 100 USDC signature in the hour is already refused.
    await ops.sign(w, '100000000');
    await ops.sign(w, '100000000');
    const refused = await refusal(ops.sign(w, '100000000'));
    assert.equal(refused.code, 'limit_exceeded');
    assert.equal(refused.details?.limit, 'wallet_amount_hour');
    assert.equal(refused.details?.max, '250000000');
    assert.equal(refused.details?.headroom, '50000000');
    await ops.sign(w, '50000000');
    await ops.sign(other, '100000000');
  });
});

describe('treasury-signer limits: rolling ceilings per wallet', function () {
  this.timeout(120_000);
  const { signer, ops, metric } = useLimitedSigner({
    TREASURY_SIGNER_MAX_PER_SIGNATURE: '2000',
    TREASURY_SIGNER_WALLET_MAX_PER_HOUR: '5000',
    TREASURY_SIGNER_WALLET_MAX_PER_DAY: '8000',
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '10',
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: '30',
  });

  it('refuses a wallet past its hourly amount (an upto counts its signed maximum) while another wallet signs', async () => {
    const [w, other] = [await ops.wallet(), await ops.wallet()];
    await ops.sign(w, '2000');
    await ops.permit(w, '2000'); // an upto authorization may move its whole maximum: it counts in full
    const refused = await refusal(ops.sign(w, '1001'));
    assert.equal(refused.code, 'limit_exceeded');
    assert.equal(refused.details?.limit, 'wallet_amount_hour');
    assert.equal(refused.details?.max, '5000');
    assert.equal(refused.details?.headroom, '1000');
    assert.equal(refused.details?.window_seconds, 3600);
    assert.ok(
      refused.details!.retry_after_seconds! > 3500 && refused.details!.retry_after_seconds! <= 3660,
      `retry after ${refused.details?.retry_after_seconds}`,
    );
    await ops.sign(w, '1000'); // exactly the headroom
    assert.equal((await refusal(ops.permit(w, '1'))).details?.limit, 'wallet_amount_hour');
    await ops.sign(other, '2000');
    await ops.permit(other, '2000');
  });

  it('refuses a wallet past its signatures per minute while another wallet signs; nothing refused reaches C_Sign', async () => {
    const [w, other] = [await ops.wallet(), await ops.wallet()];
    for (let i = 0; i < 10; i++) await ops.sign(w, '1');
    const signs = await metric('treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"');
    const refused = await refusal(ops.sign(w, '1'));
    assert.equal(refused.code, 'limit_exceeded');
    assert.deepEqual(
      { ...refused.details, retry_after_seconds: undefined },
      {
        limit: 'wallet_signatures_minute',
        max: '10',
        headroom: '0',
        window_seconds: 60,
        retry_after_seconds: undefined,
      },
    );
    assert.ok(refused.details!.retry_after_seconds! >= 1 && refused.details!.retry_after_seconds! <= 62);
    assert.equal((await refusal(ops.permit(w, '1'))).code, 'limit_exceeded');
    assert.equal(await metric('treasury_signer_hsm_operation_duration_seconds_count', 'op="sign"'), signs);
    await ops.sign(other, '1');
    assert.ok((await metric('treasury_signer_limit_refusals_total', 'limit="wallet_signatures_minute"')) >= 2);
    assert.ok((await metric('treasury_signer_limit_refusals_total', 'limit="wallet_amount_hour"')) >= 2);
  });

  it('concurrent requests cannot overshoot: 40 at once on a fresh wallet, exactly 10 signed; 20 × 1000 at once, exactly 5 signed', async () => {
    const w = await ops.wallet();
    const settled = await Promise.allSettled(Array.from({ length: 40 }, () => ops.sign(w, '1')));
    assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 10);
    for (const s of settled)
      if (s.status === 'rejected') assert.equal((s.reason as SignerError).code, 'limit_exceeded');

    const rich = await ops.wallet();
    const amounts = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? ops.permit(rich, '1000') : ops.sign(rich, '1000'))),
    );
    assert.equal(
      amounts.filter((s) => s.status === 'fulfilled').length,
      5,
      'the hourly 5000 holds exactly five signatures of 1000',
    );
  });

  it('no protocol message changes a limit: extra fields and unknown methods are refused, and the limit still holds', async () => {
    const w = await ops.wallet();
    for (let i = 0; i < 10; i++) await ops.sign(w, '1');
    assert.equal((await refusal(ops.sign(w, '1'))).code, 'limit_exceeded');
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const conn = openRawConnection(signer.socketPath);
    const params = (extra: Record<string, unknown> = {}) => ({
      account_key_ref: account,
      wallet_key_ref: w.wallet_key_ref,
      address: w.address,
      domain: DOMAIN,
      message: buildAuthorization(w.address, 99_000, { value: '1' }),
      ...extra,
    });
    const attempts: Array<[unknown, string]> = [
      [{ v: 1, id: 'a1', method: 'set_limits', params: { wallet_signatures_minute: 1_000_000 } }, 'unknown_method'],
      [{ v: 1, id: 'a2', method: 'configure', params: {} }, 'unknown_method'],
      [
        {
          v: 1,
          id: 'a3',
          method: 'sign_transfer_authorization',
          params: params({ limits: { wallet_signatures_minute: 1_000_000 } }),
        },
        'invalid_request',
      ],
      [
        {
          v: 1,
          id: 'a4',
          method: 'sign_transfer_authorization',
          params: params({ max_per_signature: '1000000000000' }),
        },
        'invalid_request',
      ],
      [
        {
          v: 1,
          id: 'a5',
          method: 'sign_transfer_authorization',
          params: params(),
          limits: { wallet_signatures_minute: 1_000_000 },
        },
        'invalid_request',
      ],
      [
        { v: 1, id: 'a6', method: 'health', params: { TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '1000000' } },
        'invalid_request',
      ],
      [
        { v: 1, id: 'a7', method: 'create_wallet_key', params: { account_key_ref: account, limits: {} } },
        'invalid_request',
      ],
    ];
    for (const [frame, code] of attempts) {
      const reply = await conn.request(frame);
      assert.equal(reply.ok, false, JSON.stringify(reply));
      assert.equal(reply.error.code, code, JSON.stringify(reply));
    }
    const again = await conn.request({ v: 1, id: 'a8', method: 'sign_transfer_authorization', params: params() });
    conn.close();
    assert.equal(again.error?.code, 'limit_exceeded', JSON.stringify(again));
    assert.equal(again.error.details.limit, 'wallet_signatures_minute');
  });
});

describe('treasury-signer limits: across restarts', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = (stateFile?: string) => ({
    TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '5',
    ...(stateFile ? { TREASURY_SIGNER_LIMITS_STATE_FILE: stateFile } : {}),
  });

  it('with TREASURY_SIGNER_LIMITS_STATE_FILE a wallet stays refused after a SIGTERM restart and after a kill -9 (the file is 0600)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-limits-'));
    dirs.push(dir);
    const stateFile = path.join(dir, 'limits-state.json');
    let signer = await startTestSigner({ dir, limits: 'signer_defaults', env: env(stateFile) });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const w = await signer.client.createWalletKey({ account_key_ref: account });
    const other = await signer.client.createWalletKey({ account_key_ref: account });
    let ops = walletOps(signer, account);
    for (let i = 0; i < 5; i++) await ops.sign(w, '1');
    assert.equal((await refusal(ops.sign(w, '1'))).details?.limit, 'wallet_signatures_minute');
    assert.equal(await signer.stop(), 0);
    assert.equal(fs.statSync(stateFile).mode & 0o777, 0o600);

    signer = await startTestSigner({ dir, limits: 'signer_defaults', env: env(stateFile) });
    ops = walletOps(signer, account);
    assert.equal(
      (await refusal(ops.sign(w, '1'))).details?.limit,
      'wallet_signatures_minute',
      'still refused after a restart',
    );
    for (let i = 0; i < 4; i++) await ops.sign(other, '1');
    await new Promise((r) => setTimeout(r, 1500)); // the windows are saved every second
    signer.child.kill('SIGKILL');
    await signer.stop();

    signer = await startTestSigner({ dir, limits: 'signer_defaults', env: env(stateFile) });
    try {
      ops = walletOps(signer, account);
      assert.equal((await refusal(ops.sign(w, '1'))).code, 'limit_exceeded', 'still refused after a kill -9');
      await ops.sign(other, '1');
      assert.equal(
        (await refusal(ops.sign(other, '1'))).details?.limit,
        'wallet_signatures_minute',
        "the other wallet's four signatures were kept too",
      );
    } finally {
      await signer.stop();
    }
  });

  it("keeps a Solana wallet's windows, saved under its base58 address, across a SIGTERM restart", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-limits-'));
    dirs.push(dir);
    const stateFile = path.join(dir, 'limits-state.json');
    const oneAMinute = { ...env(stateFile), TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '1' };
    let signer = await startTestSigner({ dir, limits: 'signer_defaults', env: oneAMinute });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const w = await signer.client.createWalletKey({ account_key_ref: account, curve: 'ed25519' });
    const message = Buffer.from(await paymentMessage({ wallet: address(w.address), amount: 10_000n })).toString(
      'base64',
    );
    const pay = (s: TestSigner) =>
      s.client.signSolanaTransaction({
        account_key_ref: account,
        wallet_key_ref: w.wallet_key_ref,
        address: w.address,
        network: DEVNET,
        message,
        pay_to: PAY_TO,
      });
    await pay(signer);
    assert.equal((await refusal(pay(signer))).details?.limit, 'wallet_signatures_minute');
    assert.equal(await signer.stop(), 0);
    const saved = JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { wallets: Record<string, unknown> };
    assert.ok(Object.hasOwn(saved.wallets, w.address), 'saved under its base58 address, as spelled');

    signer = await startTestSigner({ dir, limits: 'signer_defaults', env: oneAMinute });
    try {
      assert.equal(
        (await refusal(pay(signer))).details?.limit,
        'wallet_signatures_minute',
        "the Solana wallet's signature of the minute survived the restart",
      );
      const evm = await signer.client.createWalletKey({ account_key_ref: account });
      await walletOps(signer, account).sign(evm, '1');
    } finally {
      await signer.stop();
    }
  });

  it('without a state file the windows start empty after a restart (the documented hole), and a corrupt state file stops the signer', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-limits-'));
    dirs.push(dir);
    let signer = await startTestSigner({ dir, limits: 'signer_defaults', env: env() });
    const account = (await signer.client.createAccountKey()).account_key_ref;
    const w = await signer.client.createWalletKey({ account_key_ref: account });
    let ops = walletOps(signer, account);
    for (let i = 0; i < 5; i++) await ops.sign(w, '1');
    assert.equal((await refusal(ops.sign(w, '1'))).code, 'limit_exceeded');
    await signer.stop();
    signer = await startTestSigner({ dir, limits: 'signer_defaults', env: env() });
    ops = walletOps(signer, account);
    await ops.sign(w, '1');
    await signer.stop();

    const corrupt = path.join(dir, 'corrupt.json');
    fs.writeFileSync(corrupt, '{"v":1,"wallets":{"0xnot-an-address":{}}}', { mode: 0o600 });
    await assert.rejects(
      startTestSigner({ dir, limits: 'signer_defaults', env: env(corrupt) }),
      /is not a signer limits state file; move it away/,
    );
    await assert.rejects(
      startTestSigner({ dir, limits: 'signer_defaults', env: env(path.join(dir, 'no-such-dir', 'state.json')) }),
      /cannot write TREASURY_SIGNER_LIMITS_STATE_FILE/,
    );
  });
});

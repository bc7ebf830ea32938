/**
 * treasury-signer as a real process on a real SoftHSM token, through its socket: results carry only the
 * protocol's fields; signatures that an independent implementation (viem) recovers to the wallet, 1,000
 * in a row all low-S with v ∈ {27, 28}; static invariants refused with nothing signed (the HSM sign
 * counter does not move), an authorization that starts more than five minutes ahead among them; destroyed keys refused forever in every field; 0600 socket; SIGTERM drains
 * accepted requests, exits 0 and removes the socket; the PIN is never logged.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { recoverTypedDataAddress, type Hex } from 'viem';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { encodeFrame } from '../../../signer/protocol/frame-codec.js';
import {
  createAccountKeyResultSchema,
  createWalletKeyResultSchema,
  destroyWalletKeyResultSchema,
  healthResultSchema,
  signTransferAuthorizationResultSchema,
  signerOkReplySchema,
} from '../../../signer/protocol/signer-protocol.js';
import { findFreePort, startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import { uptoPermit2WitnessTypes } from '@x402/evm';
import {
  BASE_SEPOLIA_USDC as DOMAIN,
  HALF_N,
  PAYEE,
  PERMIT2_DOMAIN,
  buildAuthorization,
  buildPermit2Transfer,
  openRawConnection,
  readMetric,
} from './signer-test-helpers.js';

/** USDC on Base (mainnet, chain 8453). */
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const isCode = (code: string) => (e: unknown) => e instanceof SignerError && e.code === code;

describe('treasury-signer process (SoftHSM)', function () {
  this.timeout(180_000);
  let signer: TestSigner;
  let metricsPort: number;
  let accountKeyRef: string;
  let wallet: { wallet_key_ref: string; address: string; public_key: string };
  const sign = (w: { wallet_key_ref: string; address: string }, i: number, overrides: Record<string, unknown> = {}) =>
    signer.client.signTransferAuthorization({
      account_key_ref: accountKeyRef,
      wallet_key_ref: w.wallet_key_ref,
      address: w.address,
      domain: DOMAIN,
      message: buildAuthorization(w.address, i),
      ...overrides,
    } as never);

  /** viem, independently of the signer, recovers the signer of `msg` from `sig`: it must be the wallet. */
  const assertRecoversToWallet = async (
    sig: Awaited<ReturnType<typeof sign>>,
    msg: ReturnType<typeof buildAuthorization>,
  ) => {
    const recovered = await recoverAuthorizationSigner(msg, sig.signature, DOMAIN);
    assert.equal(recovered, wallet.address);
  };

  before(async () => {
    metricsPort = await findFreePort();
    signer = await startTestSigner({
      env: {
        TREASURY_SIGNER_MAX_VALUE: '1000000000',
        TREASURY_SIGNER_MAX_VALIDITY_SECONDS: '3600',
        TREASURY_SIGNER_METRICS_PORT: String(metricsPort),
      },
    });
    accountKeyRef = (await signer.client.createAccountKey()).account_key_ref;
    wallet = await signer.client.createWalletKey({ account_key_ref: accountKeyRef });
  });
  after(async () => {
    await signer?.stop();
  });

  it('answers every method with exactly the protocol fields; key refs are wrapped blobs', async () => {
    const conn = openRawConnection(signer.socketPath);
    const exact = async (method: string, params: unknown, schema: { parse(v: unknown): unknown }) => {
      const reply = await conn.request({ v: 1, id: `r-${method}`, method, params });
      assert.deepEqual(Object.keys(reply).sort(), ['id', 'ok', 'result', 'v'], JSON.stringify(reply));
      signerOkReplySchema.parse(reply);
      schema.parse(reply.result); // strict schemas: an extra field fails
      return reply.result;
    };
    assert.deepEqual(await exact('health', {}, healthResultSchema), {
      status: 'ok',
      backend: 'pkcs11',
      protocol_version: 1,
    });
    const account = (await exact('create_account_key', {}, createAccountKeyResultSchema)) as {
      account_key_ref: string;
    };
    const created = (await exact(
      'create_wallet_key',
      { account_key_ref: account.account_key_ref },
      createWalletKeyResultSchema,
    )) as typeof wallet;
    const signed = (await exact(
      'sign_transfer_authorization',
      {
        account_key_ref: account.account_key_ref,
        wallet_key_ref: created.wallet_key_ref,
        address: created.address,
        domain: DOMAIN,
        message: buildAuthorization(created.address, 1),
      },
      signTransferAuthorizationResultSchema,
    )) as Record<string, unknown>;
    assert.deepEqual(Object.keys(signed).sort(), ['digest', 'r', 's', 'signature', 'v']);
    assert.deepEqual(
      await exact(
        'destroy_wallet_key',
        { account_key_ref: account.account_key_ref, wallet_key_ref: created.wallet_key_ref },
        destroyWalletKeyResultSchema,
      ),
      { destroyed: true },
    );
    conn.close();

    // AES-KWP of a 32-byte AES key is 40 bytes; of SoftHSM's PKCS#8 secp256k1 key, 72 bytes: ciphertext, not a 32-byte scalar.
    assert.equal(Buffer.from(accountKeyRef.replace(/^p11:v1:acct:/, ''), 'base64url').length, 40);
    assert.equal(Buffer.from(wallet.wallet_key_ref.replace(/^p11:v1:wal:/, ''), 'base64url').length, 72);
    assert.match(wallet.public_key, /^0x04[0-9a-f]{128}$/);
  });

  it('signs a Permit2 upto witness transfer that viem recovers with the official x402 types, and refuses other spenders', async () => {
    const message = buildPermit2Transfer(7);
    const signed = await signer.client.signPermit2WitnessTransfer({
      account_key_ref: accountKeyRef,
      wallet_key_ref: wallet.wallet_key_ref,
      address: wallet.address,
      domain: PERMIT2_DOMAIN as never,
      message,
    });
    assert.ok(BigInt(signed.s) <= HALF_N, 'low-S');
    const recovered = await recoverTypedDataAddress({
      domain: { name: 'Permit2', chainId: 84532, verifyingContract: PERMIT2_DOMAIN.verifyingContract as Hex },
      types: uptoPermit2WitnessTypes,
      primaryType: 'PermitWitnessTransferFrom',
      message: {
        permitted: { token: message.permitted.token as Hex, amount: BigInt(message.permitted.amount) },
        spender: message.spender as Hex,
        nonce: BigInt(message.nonce),
        deadline: BigInt(message.deadline),
        witness: { to: message.witness.to as Hex, facilitator: message.witness.facilitator as Hex, validAfter: 0n },
      },
      signature: signed.signature as Hex,
    });
    assert.equal(recovered, wallet.address);
    await assert.rejects(
      signer.client.signPermit2WitnessTransfer({
        account_key_ref: accountKeyRef,
        wallet_key_ref: wallet.wallet_key_ref,
        address: wallet.address,
        domain: PERMIT2_DOMAIN as never,
        message: { ...message, spender: PAYEE },
      }),
      (e: unknown) => isCode('invariant_violation')(e) && /^allowed_spender: /.test((e as Error).message),
    );
  });

  it('signs 1,000 authorizations in a row: all low-S, v ∈ {27,28}, all recovered by viem to the wallet', async () => {
    const results: Array<{ sig: Awaited<ReturnType<typeof sign>>; msg: ReturnType<typeof buildAuthorization> }> = [];
    const started = performance.now();
    for (let batch = 0; batch < 10; batch++) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 100 }, (_, j) => {
            const msg = buildAuthorization(wallet.address, batch * 100 + j);
            return sign(wallet, 0, { message: msg }).then((sig) => ({ sig, msg }));
          }),
        )),
      );
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `      ${results.length} signatures through the socket in ${seconds.toFixed(2)} s (${Math.round(results.length / seconds)}/s, 4 connections, 100 in flight)`,
    );
    assert.equal(results.length, 1000);
    const vs = new Set<number>();
    for (const { sig, msg } of results) {
      assert.ok(BigInt(sig.s) <= HALF_N, 'low-S');
      assert.ok(sig.v === 27 || sig.v === 28);
      assert.equal(sig.signature, `${sig.r}${sig.s.slice(2)}${sig.v.toString(16)}`);
      vs.add(sig.v);
      await assertRecoversToWallet(sig, msg);
    }
    assert.deepEqual([...vs].sort(), [27, 28], 'both recovery ids occur');
  });

  it('signs on the main thread only while no other request waits: one at a time inline, 100 in flight on the libuv pool; both verify', async () => {
    const count = (thread: string) => readMetric(metricsPort, 'treasury_signer_signatures_total', `thread="${thread}"`);
    const [inline0, pool0] = [await count('inline'), await count('pool')];
    for (let i = 0; i < 20; i++) {
      const msg = buildAuthorization(wallet.address, 5_000 + i);
      await assertRecoversToWallet(await sign(wallet, 0, { message: msg }), msg);
    }
    assert.equal((await count('inline')) - inline0, 20, 'each request alone in the signer: signed on the main thread');
    assert.equal((await count('pool')) - pool0, 0);
    const msgs = Array.from({ length: 100 }, (_, i) => buildAuthorization(wallet.address, 6_000 + i));
    const sigs = await Promise.all(msgs.map((msg) => sign(wallet, 0, { message: msg })));
    for (let i = 0; i < msgs.length; i++) await assertRecoversToWallet(sigs[i]!, msgs[i]!);
    const pooled = (await count('pool')) - pool0;
    assert.equal((await count('inline')) - inline0 + pooled, 120);
    assert.ok(pooled >= 90, `requests that overlap are signed in parallel on the pool (${pooled} of 100)`);
  });

  it('with TREASURY_PKCS11_SIGN_INLINE=never signs every request on the libuv pool', async () => {
    const port = await findFreePort();
    const other = await startTestSigner({
      env: { TREASURY_SIGNER_METRICS_PORT: String(port), TREASURY_PKCS11_SIGN_INLINE: 'never' },
    });
    try {
      const account = (await other.client.createAccountKey()).account_key_ref;
      const w = await other.client.createWalletKey({ account_key_ref: account });
      for (let i = 0; i < 5; i++) {
        await other.client.signTransferAuthorization({
          account_key_ref: account,
          wallet_key_ref: w.wallet_key_ref,
          address: w.address,
          domain: DOMAIN,
          message: buildAuthorization(w.address, i),
        } as never);
      }
      assert.equal(await readMetric(port, 'treasury_signer_signatures_total', 'thread="pool"'), 5);
      assert.equal(await readMetric(port, 'treasury_signer_signatures_total', 'thread="inline"'), 0);
    } finally {
      await other.stop();
    }
  });

  it('refuses to sign outside the static invariants, naming the rule, and signs nothing', async () => {
    const signsBefore = await readMetric(
      metricsPort,
      'treasury_signer_hsm_operation_duration_seconds_count',
      'op="sign"',
    );
    assert.ok(signsBefore >= 1000, `sign counter ${signsBefore}`);
    const now = Math.floor(Date.now() / 1000);
    const m = (overrides: Record<string, string>) => ({ message: buildAuthorization(wallet.address, 1, overrides) });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ domain: { ...DOMAIN, chainId: 1 } }, /^allowed_token: /],
      [{ domain: { ...DOMAIN, chainId: 8453 } }, /^allowed_token: /],
      // USDC on Base (mainnet): not signed for unless TREASURY_SIGNER_ALLOWED_TOKENS names it (testnet-only default).
      [{ domain: { ...DOMAIN, chainId: 8453, verifyingContract: BASE_USDC } }, /^allowed_token: /],
      [{ domain: { ...DOMAIN, verifyingContract: PAYEE } }, /^allowed_token: /],
      [m({ from: PAYEE }), /^from_is_wallet: /],
      [m({ value: '0' }), /^value_positive: /],
      [m({ value: '1000000001' }), /^value_max: /],
      [m({ validAfter: String(now + 100), validBefore: String(now + 50) }), /^window_ordered: /],
      [m({ validBefore: String(now - 1) }), /^window_open: /],
      [m({ validBefore: String(now + 7200) }), /^window_max: /],
      [m({ validAfter: String(now + 3000), validBefore: String(now + 3000 + 3601) }), /^window_max: /],
    ];
    for (const [override, pattern] of cases) {
      // The rule travels as a field (details.rule), not only as the message's prefix.
      const rule = pattern.source.slice(1, -2);
      await assert.rejects(
        sign(wallet, 1, override),
        (e: unknown) =>
          isCode('invariant_violation')(e) &&
          pattern.test((e as Error).message) &&
          (e as SignerError).details?.rule === rule,
        JSON.stringify(override),
      );
    }
    // Lower-case contract address and upper-case wallet address are the same token and wallet.
    await sign(wallet, 2, { domain: { ...DOMAIN, verifyingContract: DOMAIN.verifyingContract.toLowerCase() } });
    const signsAfter = await readMetric(
      metricsPort,
      'treasury_signer_hsm_operation_duration_seconds_count',
      'op="sign"',
    );
    assert.equal(signsAfter, signsBefore + 1, 'the refused requests never reached C_Sign');
    // A wallet that is not the one whose key signs: signed in the HSM, but refused before it leaves.
    await assert.rejects(
      sign({ ...wallet, address: PAYEE }, 3, { message: buildAuthorization(PAYEE, 3) }),
      isCode('address_mismatch'),
    );
  });

  it('refuses an authorization that starts more than 300 s ahead (window_starts_soon), EIP-3009 and Permit2 alike, and signs nothing', async () => {
    const signatures = () => readMetric(metricsPort, 'treasury_signer_signatures_total');
    const now = Math.floor(Date.now() / 1000);
    // 301 s ahead and a margin: the signer reads its clock a moment after this test did.
    const tooFar = now + 301 + 5;
    const startsSoon = (e: unknown) =>
      isCode('invariant_violation')(e) &&
      /^window_starts_soon: /.test((e as Error).message) &&
      (e as SignerError).details?.rule === 'window_starts_soon';
    const permit2 = (validAfter: number, i: number) => {
      const message = buildPermit2Transfer(i);
      return signer.client.signPermit2WitnessTransfer({
        account_key_ref: accountKeyRef,
        wallet_key_ref: wallet.wallet_key_ref,
        address: wallet.address,
        domain: PERMIT2_DOMAIN as never,
        message: {
          ...message,
          deadline: String(validAfter + 600),
          witness: { ...message.witness, validAfter: String(validAfter) },
        },
      });
    };
    const before = await signatures();
    const starting = (validAfter: number) => ({
      message: buildAuthorization(wallet.address, 11, {
        validAfter: String(validAfter),
        validBefore: String(validAfter + 600),
      }),
    });
    await assert.rejects(sign(wallet, 11, starting(tooFar)), startsSoon);
    await assert.rejects(sign(wallet, 12, starting(now + 30 * 86_400)), startsSoon);
    await assert.rejects(permit2(tooFar, 13), startsSoon);
    assert.equal(await signatures(), before, 'the refused requests never reached the key backend');
    // Open now, or a few minutes ahead within the clock-skew allowance: signed.
    await sign(wallet, 14, starting(now));
    await sign(wallet, 15, starting(now + 290));
    await permit2(now, 16);
    assert.equal(await signatures(), before + 3);
  });

  it('refuses a destroyed wallet key forever, in any field and spelling; siblings keep signing', async () => {
    const doomed = await signer.client.createWalletKey({ account_key_ref: accountKeyRef });
    const sibling = await signer.client.createWalletKey({ account_key_ref: accountKeyRef });
    await sign(doomed, 7);
    const destroy = (wallet_key_ref: string, account_key_ref = accountKeyRef) =>
      signer.client.destroyWalletKey({ account_key_ref, wallet_key_ref });
    assert.deepEqual(await destroy(doomed.wallet_key_ref), { destroyed: true });
    assert.deepEqual(await destroy(doomed.wallet_key_ref), { destroyed: true }, 'destroy is retry-safe');
    await assert.rejects(sign(doomed, 8), isCode('key_destroyed'));
    // As an account, the destroyed blob is no account at all: refused as any reference that is none (it does not
    // say that a key was destroyed, to whoever holds its reference).
    const sameBlobAsAccount = doomed.wallet_key_ref.replace('p11:v1:wal:', 'p11:v1:acct:');
    await assert.rejects(
      signer.client.createWalletKey({ account_key_ref: doomed.wallet_key_ref }),
      isCode('key_not_found'),
    );
    await assert.rejects(
      signer.client.createWalletKey({ account_key_ref: sameBlobAsAccount }),
      isCode('key_not_found'),
    );
    await assert.rejects(sign(doomed, 9, { account_key_ref: sameBlobAsAccount }), isCode('key_not_found'));
    await sign(sibling, 10);
    await sign(wallet, 11);
    // A blob that is not a key of this account is not destroyed (nothing to tombstone): key_not_found.
    const otherAccount = (await signer.client.createAccountKey()).account_key_ref;
    await assert.rejects(destroy(sibling.wallet_key_ref, otherAccount), isCode('key_not_found'));
    const tampered = sibling.wallet_key_ref.slice(0, -4) + (sibling.wallet_key_ref.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await assert.rejects(destroy(tampered), isCode('key_not_found'));
    await assert.rejects(sign({ ...sibling, wallet_key_ref: tampered }, 12), isCode('key_not_found'));
    await sign(sibling, 13);
  });

  it('creates the socket with mode 0600', () => {
    const stat = fs.statSync(signer.socketPath);
    assert.ok(stat.isSocket());
    assert.equal(stat.mode & 0o777, 0o600);
  });

  it('serves /metrics on loopback with the signer metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const name of [
      'treasury_signer_requests_total{method="sign_transfer_authorization",outcome="ok"}',
      'treasury_signer_requests_total{method="sign_transfer_authorization",outcome="invariant_violation"}',
      'treasury_signer_request_duration_seconds_bucket',
      'treasury_signer_hsm_operation_duration_seconds_bucket',
      'treasury_signer_key_cache_hits_total',
      'treasury_signer_key_cache_misses_total',
    ]) {
      assert.ok(text.includes(name), name);
    }
    assert.ok((await readMetric(metricsPort, 'treasury_signer_key_cache_hits_total')) >= 1000);
    assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status, 404);
  });

  it('on SIGTERM finishes the accepted requests, exits 0, removes the socket, never logged the PIN', async () => {
    assert.ok(signer.token, 'a PKCS#11 signer (this suite runs on SoftHSM)');
    const pin = fs.readFileSync(signer.token.pinFile, 'utf8').trim();
    const conn = openRawConnection(signer.socketPath);
    const n = 48;
    const frames = Array.from({ length: n }, (_, i) =>
      encodeFrame({
        v: 1,
        id: `drain-${i}`,
        method: 'sign_transfer_authorization',
        params: {
          account_key_ref: accountKeyRef,
          wallet_key_ref: wallet.wallet_key_ref,
          address: wallet.address,
          domain: DOMAIN,
          message: buildAuthorization(wallet.address, 5000 + i),
        },
      }),
    );
    conn.send(Buffer.concat(frames)); // one write: the server reads and accepts them together
    const first = await conn.next();
    const stopped = signer.stop();
    const replies = [first];
    for (let i = 1; i < n; i++) replies.push(await conn.next());
    assert.equal(await stopped, 0, signer.logs());
    assert.deepEqual(
      replies.map((r) => r?.ok),
      Array(n).fill(true),
      'every accepted request was answered before exit',
    );
    assert.ok(!fs.existsSync(signer.socketPath), 'socket removed');
    assert.match(signer.logs(), /"msg":"signer stopped"/);
    // Each closeable closed in order, one JSON line each with its duration and outcome (base/closeables.ts).
    const steps = signer
      .logs()
      .split('\n')
      .filter((l) => l.includes('"msg":"shutdown step"'))
      .map((l) => JSON.parse(l) as { step: string; outcome: string; duration_ms: number });
    assert.deepEqual(
      steps.map((s) => s.step),
      ['metrics_server', 'signer_socket', 'limits_state_saver', 'hsm_sessions'],
      signer.logs(),
    );
    assert.ok(steps.every((s) => s.outcome === 'closed' && typeof s.duration_ms === 'number'));
    assert.ok(!signer.logs().includes(pin), 'the PIN is never logged');
    assert.ok(!signer.logs().includes(wallet.wallet_key_ref.slice(12)), 'key refs are never logged');
  });
});

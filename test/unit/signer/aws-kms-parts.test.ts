/**
 * The AWS KMS backend's pure parts: DER signatures from an independent implementation (noble, high-S
 * left as KMS leaves it) into r‖s and through the shared finalisation (low-S, recovered by viem), SPKI
 * public keys, the key references, error classification, the retry loop's decisions (backoff, deadline,
 * CreateKey never re-sent after a maybe-executed failure, a caller's refusal before each attempt), the sign rate
 * and the tombstone file.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, recoverAddress } from 'viem';
import { publicKeyToAddress as viemPublicKeyToAddress } from 'viem/accounts';
import { runKmsCall, DEFAULT_RETRY_POLICY, KmsCallFault } from '../../../signer/backends/aws-kms/kms-call.js';
import { derSignatureToCompact } from '../../../signer/backends/aws-kms/kms-der-signature.js';
import { classifyKmsError } from '../../../signer/backends/aws-kms/kms-error-class.js';
import { awsAccountOfArn, walletKeyPolicy } from '../../../signer/backends/aws-kms/kms-key-policy.js';
import * as keyRef from '../../../signer/backends/aws-kms/kms-key-ref.js';
import { spkiToUncompressedPoint } from '../../../signer/backends/aws-kms/kms-public-key.js';
import { KmsBreaker } from '../../../signer/backends/aws-kms/kms-breaker.js';
import { KmsSignRate } from '../../../signer/backends/aws-kms/kms-sign-rate.js';
import { KmsTombstones } from '../../../signer/backends/aws-kms/kms-tombstones.js';
import { finalizeSignature } from '../../../signer/ecdsa/finalize-signature.js';
import { keyRefSchema } from '../../../signer/protocol/signer-protocol.js';
import { startSentinel } from '../../support/timer-order.js';
import { SignerFault } from '../../../signer/signer-error.js';

const N = secp256k1.Point.CURVE().n;
const HALF_N = N >> 1n;
const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;
const KEY_ID = '1234abcd-12ab-34cd-56ef-1234567890ab';
const ACCOUNT_ID = 'a'.repeat(32);

describe('AWS KMS backend: DER signatures and SPKI public keys', () => {
  it('turns 400 KMS-like DER signatures (high-S about half the time) into r‖s that finalise low-S and recover by viem', async () => {
    const priv = secp256k1.utils.randomSecretKey();
    const pub = secp256k1.getPublicKey(priv, false);
    const address = viemPublicKeyToAddress(bytesToHex(pub));
    let highS = 0;
    const lengths = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const digest = secp256k1.utils.randomSecretKey();
      // As KMS signs: no low-S normalisation, DER, no prehash (MessageType DIGEST).
      const der = secp256k1.sign(digest, priv, { prehash: false, lowS: false, format: 'der' });
      lengths.add(der.length);
      const compact = derSignatureToCompact(der);
      const parsed = secp256k1.Signature.fromBytes(der, 'der');
      assert.deepEqual(compact, parsed.toBytes('compact'));
      if (parsed.s > HALF_N) highS++;
      const sig = finalizeSignature(digest, compact, address);
      assert.ok(BigInt(sig.s) <= HALF_N, 'low-S');
      assert.equal(await recoverAddress({ hash: bytesToHex(digest), signature: sig.signature }), address);
    }
    assert.ok(highS > 130 && highS < 270, `high-S count ${highS} (KMS does not normalise)`);
    assert.ok(lengths.size >= 2, 'DER lengths vary with the integers');
  });

  it('refuses malformed DER with hsm_error (no hand-rolled parsing)', () => {
    const priv = secp256k1.utils.randomSecretKey();
    const der = secp256k1.sign(new Uint8Array(32).fill(1), priv, { prehash: false, lowS: false, format: 'der' });
    const zeroR = Uint8Array.from([0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x01]);
    for (const bad of [
      new Uint8Array(0),
      der.subarray(0, der.length - 1),
      Uint8Array.from([...der, 0]),
      new Uint8Array(64).fill(1),
      zeroR,
      new Uint8Array(73),
    ]) {
      assert.throws(() => derSignatureToCompact(bad), isFault('hsm_error'));
    }
  });

  it('reads the uncompressed point from a secp256k1 SPKI and refuses other curves and garbage', () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const spki = publicKey.export({ format: 'der', type: 'spki' });
    assert.equal(spki.length, 88);
    const d = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
    assert.deepEqual(spkiToUncompressedPoint(new Uint8Array(spki)), secp256k1.getPublicKey(d, false));
    const p256 = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({
      format: 'der',
      type: 'spki',
    });
    assert.throws(() => spkiToUncompressedPoint(new Uint8Array(p256)), isFault('hsm_error'));
    assert.throws(() => spkiToUncompressedPoint(new Uint8Array(spki.subarray(0, 80))), isFault('hsm_error'));
    assert.throws(() => spkiToUncompressedPoint(new Uint8Array(32)), isFault('hsm_error'));
  });
});

describe('AWS KMS backend: key references', () => {
  it('accepts only the canonical spellings, which match the protocol keyRefSchema', () => {
    const account = '0123456789abcdef0123456789abcdef';
    assert.equal(keyRef.decodeAccountRef(keyRef.encodeAccountRef(account)), account);
    assert.equal(keyRef.decodeWalletRef(keyRef.encodeWalletRef(KEY_ID)), KEY_ID);
    assert.ok(
      keyRefSchema.safeParse(keyRef.encodeAccountRef(account)).success &&
        keyRefSchema.safeParse(keyRef.encodeWalletRef(KEY_ID)).success,
    );
    for (const bad of [
      keyRef.encodeWalletRef(KEY_ID.toUpperCase()),
      `kms:v1:wal:arn:aws:kms:eu-west-1:111122223333:key/${KEY_ID}`,
      `kms:v1:acct:${KEY_ID}`,
      'p11:v1:wal:AAAAAAAAAAAAAAAAAAAAAA',
      `kms:v2:wal:${KEY_ID}`,
      `kms:v1:wal:${KEY_ID} `,
    ]) {
      assert.throws(() => keyRef.decodeWalletRef(bad), isFault('key_not_found'), bad);
    }
    assert.throws(
      () => keyRef.decodeAccountRef(keyRef.encodeAccountRef(account.toUpperCase())),
      isFault('key_not_found'),
    );
    assert.throws(() => keyRef.decodeAccountRef(keyRef.encodeWalletRef(KEY_ID)), isFault('key_not_found'));
    assert.equal(keyRef.walletAlias('treasury', account, KEY_ID), `alias/treasury/${account}/${KEY_ID}`);
    assert.ok(keyRef.arnNamesKey(`arn:aws:kms:eu-west-1:111122223333:key/${KEY_ID}`, KEY_ID));
    assert.ok(!keyRef.arnNamesKey(`arn:aws:kms:eu-west-1:111122223333:key/${KEY_ID.replace('1234', '9999')}`, KEY_ID));
    assert.ok(!keyRef.arnNamesKey(undefined, KEY_ID));
  });

  it('builds a per-account key policy: signer uses, digests only, destroyed stays destroyed', () => {
    assert.equal(awsAccountOfArn('arn:aws:iam::111122223333:role/treasury-signer'), '111122223333');
    assert.equal(awsAccountOfArn('role/x'), undefined);
    const policy = JSON.parse(
      walletKeyPolicy({
        awsAccountId: '111122223333',
        signerPrincipalArn: 'arn:aws:iam::111122223333:role/treasury-signer',
        adminPrincipalArn: undefined,
        treasuryAccountId: 'ab'.repeat(16),
      }),
    );
    const bySid = Object.fromEntries(policy.Statement.map((s: { Sid: string }) => [s.Sid, s]));
    assert.equal(policy.Id, `treasury-account-${'ab'.repeat(16)}`);
    assert.equal(bySid.AccountRootAdministers.Principal.AWS, 'arn:aws:iam::111122223333:root');
    assert.ok(
      !bySid.TreasurySignerUses.Action.includes('kms:EnableKey') &&
        bySid.TreasurySignerUses.Action.includes('kms:Sign'),
    );
    assert.deepEqual(bySid.DigestsOnly.Condition, { StringNotEquals: { 'kms:MessageType': 'DIGEST' } });
    assert.deepEqual(bySid.DestroyedStaysDestroyed.Action, ['kms:EnableKey', 'kms:CancelKeyDeletion']);
  });
});

/** An SDK-shaped error: what @aws-sdk/client-kms throws (name, $metadata.httpStatusCode, $fault). */
function sdkError(name: string, status?: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(name), {
    name,
    ...(status ? { $metadata: { httpStatusCode: status }, $fault: status >= 500 ? 'server' : 'client' } : {}),
    ...extra,
  });
}

describe('AWS KMS backend: error classification', () => {
  it('classes each failure: retryable or not, and whether it may have been carried out', () => {
    const table: Array<[Error, string, boolean, boolean]> = [
      [sdkError('ThrottlingException', 400), 'throttled', true, false],
      [sdkError('Unknown', 429), 'throttled', true, false],
      [sdkError('KMSInternalException', 500), 'server_error', true, true],
      [sdkError('DependencyTimeoutException', 503), 'server_error', true, true],
      [
        Object.assign(new SyntaxError('Unexpected token <'), { $response: { statusCode: 502 } }),
        'server_error',
        true,
        true,
      ],
      [sdkError('NotFoundException', 400), 'not_found', false, false],
      [sdkError('DisabledException', 409), 'disabled', false, false],
      [sdkError('KMSInvalidStateException', 409), 'invalid_state', false, false],
      [sdkError('AlreadyExistsException', 409), 'already_exists', false, false],
      [sdkError('LimitExceededException', 400), 'quota', false, false],
      [sdkError('AccessDeniedException', 400), 'access_denied', false, false],
      [sdkError('ValidationException', 400), 'invalid_request', false, false],
      [
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
        'unreachable',
        false,
        false,
      ],
      [
        Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), {}),
        'unreachable',
        false,
        false,
      ],
      [
        Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', name: 'TimeoutError' }),
        'connection_lost',
        true,
        true,
      ],
      [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'timeout', true, true],
      [Object.assign(new Error('timed out'), { name: 'TimeoutError' }), 'timeout', true, true],
    ];
    for (const [err, reason, retryable, maybeExecuted] of table) {
      assert.deepEqual(
        classifyKmsError(err),
        { reason, retryable, maybeExecuted },
        `${err.name} ${String((err as { code?: string }).code ?? '')}`,
      );
    }
  });
});

describe('AWS KMS backend: retries within a deadline', () => {
  const fast = {
    ...DEFAULT_RETRY_POLICY,
    attemptTimeoutMs: 200,
    baseDelayMs: 1,
    throttleBaseDelayMs: 2,
    maxDelayMs: 20,
  };
  function recorder() {
    const events: string[] = [];
    return {
      events,
      observer: {
        kmsRequest: (op: string, _s: number, outcome: string) => events.push(`${op}:${outcome}`),
        kmsThrottle: (op: string) => events.push(`${op}:throttle`),
        kmsRetry: (op: string, reason: string) => events.push(`${op}:retry:${reason}`),
        kmsFailure: (op: string, reason: string) => events.push(`${op}:fail:${reason}`),
      },
    };
  }

  it('retries throttling and 5xx with backoff (full jitter, capped) and counts each', async () => {
    const { events, observer } = recorder();
    const failures = [sdkError('ThrottlingException', 400), sdkError('KMSInternalException', 500)];
    const delays: number[] = [];
    const result = await runKmsCall(
      'sign',
      async () => {
        const next = failures.shift();
        if (next) throw next;
        return 'signed';
      },
      {
        idempotent: true,
        deadline: Date.now() + 5000,
        policy: { ...fast, throttleBaseDelayMs: 100, baseDelayMs: 50, maxDelayMs: 1000 },
        observer,
        random: () => 0.5,
        sleep: async (ms) => void delays.push(ms),
      },
    );
    assert.equal(result, 'signed');
    assert.deepEqual(delays, [50, 50], 'attempt 0 throttled: 0.5 × 100; attempt 1 server error: 0.5 × 50 × 2');
    assert.deepEqual(events, [
      'sign:throttled',
      'sign:throttle',
      'sign:retry:throttled',
      'sign:server_error',
      'sign:retry:server_error',
      'sign:ok',
    ]);
  });

  it('never sends a non-idempotent call again after a failure that may have been carried out; does after a clean refusal', async () => {
    const { events, observer } = recorder();
    let sent = 0;
    await assert.rejects(
      runKmsCall(
        'create_key',
        async () => {
          sent++;
          throw sdkError('KMSInternalException', 500);
        },
        { idempotent: false, deadline: Date.now() + 5000, policy: fast, observer },
      ),
      (e: unknown) =>
        e instanceof KmsCallFault &&
        e.code === 'backend_unavailable' &&
        e.kms.maybeExecuted &&
        /not sent again/.test(e.message),
    );
    assert.equal(sent, 1);
    assert.deepEqual(events, ['create_key:server_error', 'create_key:fail:maybe_executed']);
    sent = 0;
    const ok = await runKmsCall(
      'create_key',
      async () => {
        if (++sent === 1) throw sdkError('ThrottlingException', 400);
        return 'created';
      },
      { idempotent: false, deadline: Date.now() + 5000, policy: fast },
    );
    assert.deepEqual([ok, sent], ['created', 2]);
  });

  it("ends with the caller's refusal before an attempt goes on the wire (a retry included), sending nothing and counting no KMS failure", async () => {
    const { events, observer } = recorder();
    let sent = 0;
    let destroyed = false;
    const refusal = new SignerFault('key_destroyed', 'destroyed while this signature waited');
    const slots: string[] = [];
    await assert.rejects(
      runKmsCall(
        'sign',
        async () => {
          sent++;
          throw sdkError('KMSInternalException', 500);
        },
        {
          idempotent: true,
          deadline: Date.now() + 5000,
          policy: fast,
          observer,
          // The key is destroyed during the backoff after the first attempt.
          sleep: async () => void (destroyed = true),
          slot: async (_deadline, attempt) => {
            slots.push(destroyed ? 'after destroy' : 'before destroy');
            return attempt();
          },
          refuse: () => (destroyed ? refusal : undefined),
        },
      ),
      (e: unknown) => e === refusal,
    );
    assert.equal(sent, 1, 'the retry was not sent');
    assert.deepEqual(slots, ['before destroy', 'after destroy'], 'asked after the wait for a slot');
    assert.deepEqual(events, ['sign:server_error', 'sign:retry:server_error']);
  });

  it('a stalled request is aborted per attempt and the call ends with backend_unavailable by its deadline', async () => {
    const { events, observer } = recorder();
    const started = Date.now();
    // Every timer of the call (each attempt's abort, each back-off) expires by the 700 ms deadline, so the call
    // ends before a sentinel one more attempt later (900 ms) has fired: an order of timers, which holds however
    // late a loaded machine runs them (test/support/timer-order.ts). Not before the deadline: timers never
    // fire early.
    const sentinel = startSentinel(900);
    let attempts = 0;
    await assert.rejects(
      runKmsCall(
        'sign',
        (signal) => {
          attempts++;
          return new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))),
          );
        },
        { idempotent: true, deadline: started + 700, policy: fast, observer },
      ).finally(() => sentinel.clear()),
      isFault('backend_unavailable'),
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 600, `ended by the deadline, not before (${elapsed} ms)`);
    assert.equal(sentinel.fired, false, `ended past the deadline by more than one attempt (${elapsed} ms)`);
    assert.ok(attempts >= 3, `each attempt aborted at 200 ms and retried (${attempts})`);
    assert.ok(events.at(-1)?.startsWith('sign:fail:'));
  });

  it('an unreachable KMS fails at once, without retries; a refusal maps to a stable code', async () => {
    // At once: one attempt, no retry (a count, whatever the load), and without waiting on any timer: before a
    // 1 ms sentinel started with it has fired (test/support/timer-order.ts), far before the 5 s deadline.
    const sentinel = startSentinel(1);
    let attempts = 0;
    await assert.rejects(
      runKmsCall(
        'sign',
        async () => {
          attempts++;
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        },
        { idempotent: true, deadline: Date.now() + 5000, policy: fast },
      ).finally(() => sentinel.clear()),
      isFault('backend_unavailable'),
    );
    assert.equal(attempts, 1, 'not retried');
    assert.equal(sentinel.fired, false, 'failed only after a timer: it waited');
    const refusals: Array<[string, string]> = [
      ['NotFoundException', 'key_not_found'],
      ['DisabledException', 'key_destroyed'],
      ['KMSInvalidStateException', 'key_destroyed'],
      ['AccessDeniedException', 'hsm_error'],
    ];
    for (const [name, code] of refusals) {
      await assert.rejects(
        runKmsCall(
          'sign',
          async () => {
            throw sdkError(name, 400);
          },
          { idempotent: true, deadline: Date.now() + 5000, policy: fast },
        ),
        isFault(code),
      );
    }
  });
});

describe('AWS KMS backend: sign rate and tombstones', () => {
  it('keeps to the configured rate and gives up at the deadline', async () => {
    const rate = new KmsSignRate(50, 1000);
    const started = Date.now();
    await Promise.all(Array.from({ length: 20 }, () => rate.take(Date.now() + 5000)));
    const elapsed = Date.now() - started;
    // 5 tokens per 100 ms window: 20 takes span at least 4 windows.
    assert.ok(elapsed >= 250, `20 signs at 50/s took ${elapsed} ms`);
    const slow = new KmsSignRate(1, 1000);
    await slow.take(Date.now() + 1000);
    await assert.rejects(slow.take(Date.now() + 100), isFault('backend_unavailable'));
    const tiny = new KmsSignRate(1, 1);
    await tiny.take(Date.now() + 1000);
    const waiting = tiny.take(Date.now() + 3000).catch(() => undefined);
    await assert.rejects(tiny.take(Date.now() + 3000), isFault('busy'));
    await waiting;
    await new KmsSignRate(0, 1).take(Date.now() + 1); // off: never waits
  });

  it('tombstones survive a reload from their file, and only key ids are read back', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kms-tomb-'));
    try {
      const file = path.join(dir, 'tombstones');
      const t = KmsTombstones.load(file);
      assert.ok(!t.has(KEY_ID));
      t.record(KEY_ID, ACCOUNT_ID);
      t.record(KEY_ID, ACCOUNT_ID);
      fs.appendFileSync(file, 'not a key id\n');
      const again = KmsTombstones.load(file);
      assert.ok(again.has(KEY_ID));
      assert.equal(
        fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => l === `${KEY_ID} ${ACCOUNT_ID}`).length,
        1,
      );
      assert.equal(fs.statSync(file).mode & 0o777, 0o600);
      assert.ok(!KmsTombstones.load(undefined).has(KEY_ID));
      // Told apart by account: destroyed to its own, not found to another; a line without an account to every one.
      assert.equal(again.stateFor(KEY_ID, ACCOUNT_ID), 'destroyed');
      assert.equal(again.stateFor(KEY_ID, 'f'.repeat(32)), 'of_another_account');
      const legacy = '0f0f0f0f-1111-2222-3333-444444444444';
      fs.appendFileSync(file, `${legacy}\n`);
      assert.equal(KmsTombstones.load(file).stateFor(legacy, 'f'.repeat(32)), 'destroyed');
      assert.equal(KmsTombstones.load(file).stateFor('0f0f0f0f-1111-2222-3333-555555555555', ACCOUNT_ID), 'live');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('AWS KMS backend: failing fast while KMS does not answer', () => {
  it('opens after three calls in a row that got no answer, lets one probe through per cool-down, closes on a success; throttling and refusals do not count', () => {
    let now = 0;
    const breaker = new KmsBreaker(3, 1000, () => now);
    for (const reason of ['throttled', 'not_found', 'access_denied', 'throttled'] as const) breaker.failed(reason);
    breaker.admit('sign');
    breaker.failed('timeout');
    breaker.failed('unreachable');
    breaker.admit('sign');
    breaker.failed('server_error');
    assert.ok(breaker.open);
    assert.throws(() => breaker.admit('sign'), isFault('backend_unavailable'));
    now = 1000;
    breaker.admit('sign'); // the probe
    assert.throws(() => breaker.admit('sign'), isFault('backend_unavailable'), 'one probe per cool-down');
    breaker.failed('timeout');
    now = 1500;
    assert.throws(() => breaker.admit('sign'), isFault('backend_unavailable'));
    now = 2100;
    breaker.admit('sign');
    breaker.succeeded();
    assert.ok(!breaker.open);
    breaker.admit('sign');
    breaker.admit('sign');
  });
});

/**
 * The KeyBackend contract (./key-backend-contract.ts) against the AWS KMS backend, in-process, talking
 * to the KMS emulator (ops/kms-emulator/, a test double) over HTTP through the real @aws-sdk/client-kms,
 * SigV4-signed with the emulator's test credentials; tombstones in a file that outlives a restart; fault
 * tests through the emulator's throttling, stalls, lost answers and refused connections.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startKmsEmulator, type KmsEmulator } from '../../../ops/kms-emulator/kms-emulator.js';
import { AwsKmsBackend } from '../../../signer/backends/aws-kms/aws-kms-backend.js';
import { decodeWalletRef } from '../../../signer/backends/aws-kms/kms-key-ref.js';
import type { AwsKmsBackendConfig } from '../../../signer/config/signer-config.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { startSentinel } from '../../support/timer-order.js';
import { describeKeyBackendContract, type ContractSubject } from './key-backend-contract.js';

/** A failed Sign attempt with no clean refusal: KMS may have signed (signer/backends/aws-kms/kms-error-class.ts). */
const MAYBE_SIGNED = new Set(['timeout', 'connection_lost', 'server_error']);

function kmsConfig(kms: KmsEmulator, dir: string, overrides: Partial<AwsKmsBackendConfig> = {}): AwsKmsBackendConfig {
  return {
    kind: 'aws-kms',
    region: kms.region,
    endpoint: kms.url,
    signRatePerSecond: 0,
    // The emulator signs in this very process: 200 signatures in flight at once take as long as 200 in a
    // row, and under two CPU hogs on 2 cores one took about 68 ms (1,000 in 68 s), so the 200 passed a 15 s
    // deadline, and the 'not answering' breaker then failed the suites after it. The contract's tests other
    // than the fault tests (which open their own backend with their own deadlines) prove outcomes, never
    // times: the deadline is the configuration's maximum, and an attempt may take half of it.
    deadlineMs: 60_000,
    attemptTimeoutMs: 30_000,
    deletionWindowDays: 7,
    aliasPrefix: 'treasury-test',
    maxInFlight: 64,
    tombstoneFile: path.join(dir, 'kms-tombstones'),
    signerPrincipalArn: undefined,
    adminPrincipalArn: undefined,
    cacheSize: 1000,
    ...overrides,
  };
}

describeKeyBackendContract('AWS KMS (emulator, real SDK)', async (): Promise<ContractSubject> => {
  const kms = await startKmsEmulator({ logger: pino({ level: 'silent' }) });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-contract-'));
  const credentials = kms.clientConfig().credentials;
  const open = (overrides: Partial<AwsKmsBackendConfig> = {}, observer = {}) =>
    AwsKmsBackend.open(kmsConfig(kms, dir, overrides), observer, { sdk: { credentials } });
  const subject: ContractSubject = {
    backend: open(),
    unavailableCode: 'backend_unavailable',
    foreignRefs: {
      account: 'p11:v1:acct:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      wallet:
        'p11:v1:wal:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    },
    async reopen() {
      await subject.backend.close();
      subject.backend = open();
      return subject.backend;
    },
    async openFaulty({ signRatePerSecond, deadlineMs }) {
      let throttles = 0;
      let maybeSigned = 0;
      const backend = open(
        // An attempt may take half the deadline: time for one retry, and never a timed-out attempt from
        // load alone (a Sign timed out and retried is signed twice, which the fault tests count).
        { signRatePerSecond, deadlineMs, attemptTimeoutMs: deadlineMs / 2 },
        {
          kmsThrottle: () => void throttles++,
          kmsRequest: (op: string, _seconds: number, outcome: string) =>
            void (op === 'sign' && MAYBE_SIGNED.has(outcome) && maybeSigned++),
        },
      );
      return {
        backend,
        faults: {
          deadlineMs,
          throttleSign: (perSecond, burst) => kms.faults.rateLimit({ perSecond, burst, operations: ['Sign'] }),
          unreachable: () => kms.faults.unreachable('refuse'),
          stallSign: () => kms.faults.stall({ operations: ['Sign'] }),
          loseNextCreateAnswer: () => kms.faults.drop({ phase: 'after', operations: ['CreateKey'], count: 1 }),
          reset: () => kms.faults.reset(),
          digestsSignedTwice: (walletKeyRef) => {
            const keyId = decodeWalletRef(walletKeyRef);
            return kms.stats.digestsSignedMoreThanOnce().filter((d) => d.keyId === keyId).length;
          },
          signAttemptsMaybeSigned: () => maybeSigned,
          createKeysReceived: () => kms.stats.received('CreateKey'),
          throttlesSeen: () => throttles,
        },
      };
    },
    async close() {
      await subject.backend.close();
      await kms.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return subject;
});

describe('AWS KMS backend: what KMS holds (emulator)', function () {
  this.timeout(60_000);
  let kms: KmsEmulator;
  let dir: string;
  before(async () => {
    kms = await startKmsEmulator({ logger: pino({ level: 'silent' }) });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-state-'));
  });
  after(async () => {
    await kms.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const open = (overrides: Partial<AwsKmsBackendConfig> = {}) =>
    AwsKmsBackend.open(kmsConfig(kms, dir, overrides), {}, { sdk: { credentials: kms.clientConfig().credentials } });

  it('a wallet key is a KMS key tagged with its account, named by the account alias, with the per-account key policy when configured', async () => {
    const backend = open({
      signerPrincipalArn: 'arn:aws:iam::111122223333:role/treasury-signer',
      adminPrincipalArn: 'arn:aws:iam::111122223333:role/break-glass',
    });
    try {
      const account = await backend.createAccountKey();
      const accountId = account.split(':')[3]!;
      const wallet = await backend.createWalletKey(account);
      const keyId = wallet.walletKeyRef.split(':')[3]!;
      const key = kms.keys.resolve(keyId);
      assert.equal(key.tags.get('treasury:account'), accountId);
      assert.equal(key.tags.get('treasury:managed'), 'true');
      assert.match(key.tags.get('treasury:request') ?? '', /^[0-9a-f]{32}$/);
      assert.equal(kms.keys.resolve(`alias/treasury-test/${accountId}/${keyId}`).keyId, keyId);
      const policy = JSON.parse(key.policy);
      assert.equal(policy.Id, `treasury-account-${accountId}`);
      assert.deepEqual(policy.Statement.find((s: { Sid: string }) => s.Sid === 'DestroyedStaysDestroyed').Condition, {
        ArnNotEquals: { 'aws:PrincipalArn': 'arn:aws:iam::111122223333:role/break-glass' },
      });
    } finally {
      await backend.close();
    }
  });

  it('destroy disables the key and schedules its deletion (configured window); after KMS deletes it, the reference still answers key_destroyed', async () => {
    const backend = open({ deletionWindowDays: 9 });
    const account = await backend.createAccountKey();
    const wallet = await backend.createWalletKey(account);
    const keyId = wallet.walletKeyRef.split(':')[3]!;
    await backend.destroyWalletKey(account, wallet.walletKeyRef);
    const key = kms.keys.resolve(keyId);
    assert.equal(key.state, 'PendingDeletion');
    assert.equal(key.pendingWindowInDays, 9);
    assert.ok(kms.stats.received('DisableKey') >= 1);
    assert.deepEqual(kms.keys.completePendingDeletions().includes(keyId), true);
    await backend.close();
    const restarted = open();
    try {
      await assert.rejects(
        restarted.signDigest(account, wallet.walletKeyRef, new Uint8Array(32)),
        (e: unknown) => e instanceof SignerFault && e.code === 'key_destroyed',
      );
      await restarted.destroyWalletKey(account, wallet.walletKeyRef);
      // Without the tombstone file the deleted key is merely not found (never a signature).
      const forgetful = open({ tombstoneFile: undefined });
      await assert.rejects(
        forgetful.signDigest(account, wallet.walletKeyRef, new Uint8Array(32)),
        (e: unknown) => e instanceof SignerFault && e.code === 'key_not_found',
      );
      await forgetful.close();
    } finally {
      await restarted.close();
    }
  });

  it("a key disabled in KMS behind the signer's back is refused with key_destroyed, and a retried destroy finishes the job", async () => {
    const backend = open();
    try {
      const account = await backend.createAccountKey();
      const wallet = await backend.createWalletKey(account);
      const keyId = wallet.walletKeyRef.split(':')[3]!;
      kms.keys.resolve(keyId).state = 'Disabled';
      await assert.rejects(
        backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(1)),
        (e: unknown) => e instanceof SignerFault && e.code === 'key_destroyed',
      );
      await backend.destroyWalletKey(account, wallet.walletKeyRef);
      assert.equal(kms.keys.resolve(keyId).state, 'PendingDeletion');
    } finally {
      await backend.close();
    }
  });

  it('a KMS that only times out: the first calls end at the deadline, then calls fail at once until KMS answers again', async () => {
    // The keys are made through a backend with the generous deadlines: under load a create through the
    // 600 ms deadline timed out, and making keys is not what this test is about.
    const setup = open();
    const account = await setup.createAccountKey();
    const wallet = await setup.createWalletKey(account);
    await setup.close();
    const backend = open({ deadlineMs: 600, attemptTimeoutMs: 300 });
    try {
      kms.faults.stall({ operations: ['Sign'] });
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        await assert.rejects(
          backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(i + 1)),
          (e: unknown) => e instanceof SignerFault && e.code === 'backend_unavailable',
        );
        assert.ok(Date.now() - started >= 550, 'ended at the deadline');
      }
      const received = kms.stats.received('Sign');
      // At once: no request reached KMS (a count), and no timer was waited on — the call failed before a
      // sentinel shorter than one attempt's 300 ms time-out fired, an order that holds under any load
      // (test/support/timer-order.ts).
      const sentinel = startSentinel(250);
      await assert.rejects(
        backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(9)).finally(() => sentinel.clear()),
        (e: unknown) => e instanceof SignerFault && e.code === 'backend_unavailable',
      );
      assert.equal(sentinel.fired, false, 'failed only after waiting on a timer');
      assert.equal(kms.stats.received('Sign'), received, 'without a request to KMS');
      kms.faults.reset();
      await backend.health(); // health always asks KMS: it answers, so signing resumes
      await backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(10));
    } finally {
      kms.faults.reset();
      await backend.close();
    }
  });
});

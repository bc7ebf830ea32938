/**
 * Destroy racing signatures on the AWS KMS backend, through the real SDK and the KMS emulator (a test
 * double): a Sign that was waiting — for a retry after a timed-out attempt, or for the configured sign
 * rate — when destroy answered is refused with `key_destroyed` without another request to KMS. KMS's own
 * refusal is not relied on: DisableKey is eventually consistent (AWS's API reference says so), so each test
 * models a KMS that has not applied the disable yet by putting the emulated key back to Enabled.
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

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;

describe('AWS KMS backend: destroy while a Sign waits (emulator)', function () {
  this.timeout(60_000);
  let kms: KmsEmulator;
  let dir: string;

  before(async () => {
    kms = await startKmsEmulator({ logger: pino({ level: 'silent' }) });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-destroy-race-'));
  });
  after(async () => {
    await kms.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => kms.faults.reset());

  function open(overrides: Partial<AwsKmsBackendConfig>): AwsKmsBackend {
    const config: AwsKmsBackendConfig = {
      kind: 'aws-kms',
      region: kms.region,
      endpoint: kms.url,
      signRatePerSecond: 0,
      deadlineMs: 30_000,
      attemptTimeoutMs: 15_000,
      deletionWindowDays: 7,
      aliasPrefix: 'treasury-test',
      maxInFlight: 64,
      tombstoneFile: path.join(dir, 'kms-tombstones'),
      signerPrincipalArn: undefined,
      adminPrincipalArn: undefined,
      cacheSize: 100,
      ...overrides,
    };
    return AwsKmsBackend.open(config, {}, { sdk: { credentials: kms.clientConfig().credentials } });
  }

  async function until(condition: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(condition(), what);
  }

  /** Destroys the key, then lets KMS answer as if the disable had not reached it yet; Sign requests KMS had by then. */
  async function destroyWhileWaiting(backend: AwsKmsBackend, account: string, walletKeyRef: string) {
    await backend.destroyWalletKey(account, walletKeyRef);
    const received = kms.stats.received('Sign');
    kms.keys.resolve(decodeWalletRef(walletKeyRef)).state = 'Enabled';
    return received;
  }

  it('a Sign whose attempt timed out is not sent again after destroy answered: key_destroyed, no request to KMS', async () => {
    // Each attempt may take 2 s: the stalled first attempt is abandoned then, well after destroy answered.
    const backend = open({ attemptTimeoutMs: 2000 });
    try {
      const account = await backend.createAccountKey();
      const wallet = await backend.createWalletKey(account);
      kms.faults.stall({ operations: ['Sign'], count: 1 });
      const pending = backend.signDigest(account, wallet.walletKeyRef, new Uint8Array(32).fill(3));
      pending.catch(() => undefined);
      await until(() => kms.faults.describe().stalledRequests === 1, 'the first Sign attempt reached KMS');
      const received = await destroyWhileWaiting(backend, account, wallet.walletKeyRef);
      assert.equal(kms.faults.describe().stalledRequests, 1, 'destroy answered while the first attempt was stalled');
      await assert.rejects(pending, isFault('key_destroyed'));
      assert.equal(kms.stats.received('Sign'), received, 'no Sign request after destroy answered');
    } finally {
      await backend.close();
    }
  });

  it('a Sign waiting for the configured sign rate is refused once destroy has answered: key_destroyed, no request to KMS', async () => {
    // One signature a second: the second waits in the rate limiter for about a second.
    const backend = open({ signRatePerSecond: 1 });
    try {
      const account = await backend.createAccountKey();
      const wallet = await backend.createWalletKey(account, 'ed25519');
      const message = new Uint8Array(64).fill(5);
      const before = kms.stats.received('Sign');
      await backend.signEd25519(account, wallet.walletKeyRef, message);
      const waiting = backend.signEd25519(account, wallet.walletKeyRef, message);
      waiting.catch(() => undefined);
      const received = await destroyWhileWaiting(backend, account, wallet.walletKeyRef);
      assert.equal(received, before + 1, 'destroy answered while the second Sign waited for the sign rate');
      await assert.rejects(waiting, isFault('key_destroyed'));
      assert.equal(kms.stats.received('Sign'), received, 'no Sign request after destroy answered');
    } finally {
      await backend.close();
    }
  });
});

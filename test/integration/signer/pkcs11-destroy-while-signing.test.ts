/**
 * Destroy racing signatures on the PKCS#11 backend (SoftHSM, in-process, one pooled session so that
 * signatures queue): what `destroyWalletKey` guarantees once it has answered — no signature of that key
 * starts in the HSM afterwards, and none comes out of the backend afterwards (one the HSM was already
 * computing is discarded), on secp256k1 and Ed25519 alike, always answered `key_destroyed` — and two
 * destroys of one Ed25519 key at once both succeed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { SignerFault } from '../../../signer/signer-error.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;

/** How each request settled, and whether destroy had answered by then. */
interface Settled {
  name: string;
  afterDestroy: boolean;
  outcome: string;
}

describe('PKCS#11 backend: destroy while signatures wait for a session (SoftHSM)', function () {
  this.timeout(60_000);
  let dir: string;
  let backend: Pkcs11Backend;
  let previousConf: string | undefined;
  /** HSM signatures completed (the observer's `signed`), with whether destroy had answered by then. */
  const hsmSignatures: boolean[] = [];
  let destroyAnswered = false;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-p11-destroy-race-'));
    const token = await initSoftHsmToken({ dir });
    previousConf = process.env.SOFTHSM2_CONF;
    process.env.SOFTHSM2_CONF = token.softhsm2Conf; // read by SoftHSM at C_Initialize
    const config: Pkcs11BackendConfig = {
      kind: 'pkcs11',
      modulePath: token.modulePath,
      tokenLabel: token.tokenLabel,
      pin: fs.readFileSync(token.pinFile, 'utf8').trim(),
      kekLabel: token.kekLabel,
      // One session: the first signature holds it (C_Sign on a libuv thread), the others wait in the pool.
      sessions: 1,
      signInline: 'never',
      cacheSize: 100,
      cacheTtlMs: 60_000,
    };
    backend = Pkcs11Backend.open(config, { signed: () => void hsmSignatures.push(destroyAnswered) });
  });
  after(async () => {
    await backend?.close();
    if (previousConf === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previousConf;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    hsmSignatures.length = 0;
    destroyAnswered = false;
  });

  /** One signature in flight and five queued behind it, then destroy: how each settled. */
  async function raceDestroy(sign: () => Promise<Uint8Array>, destroy: () => Promise<void>): Promise<Settled[]> {
    const settled: Settled[] = [];
    const track = (name: string, p: Promise<unknown>) =>
      p.then(
        () => void settled.push({ name, afterDestroy: destroyAnswered, outcome: 'signed' }),
        (e: unknown) =>
          void settled.push({
            name,
            afterDestroy: destroyAnswered,
            outcome: e instanceof SignerFault ? e.code : `${e}`,
          }),
      );
    const signs = Array.from({ length: 6 }, (_, i) => track(i === 0 ? 'in flight' : `queued ${i}`, sign()));
    await destroy();
    destroyAnswered = true;
    await Promise.all(signs);
    return settled;
  }

  function assertNothingSignedAfterDestroy(settled: Settled[]) {
    const after = settled.filter((s) => s.afterDestroy);
    // The five queued signatures cannot have had the one session before destroy answered.
    assert.ok(after.length >= 5, `only ${after.length} signatures settled after destroy answered`);
    assert.deepEqual(
      after.filter((s) => s.outcome !== 'key_destroyed'),
      [],
      'every signature settling after destroy answered is refused with key_destroyed',
    );
    // No signature started in the HSM after destroy answered: at most the one already in C_Sign finished there.
    assert.ok(
      hsmSignatures.filter(Boolean).length <= 1,
      `${hsmSignatures.filter(Boolean).length} HSM signatures completed after destroy answered`,
    );
  }

  it('secp256k1: once destroy has answered, no queued signature starts and none is returned; each is refused with key_destroyed', async () => {
    const account = await backend.createAccountKey();
    const wallet = await backend.createWalletKey(account);
    const digest = new Uint8Array(32).fill(7);
    await backend.signDigest(account, wallet.walletKeyRef, digest); // the handles are cached: no unwrap in the race
    hsmSignatures.length = 0;
    const settled = await raceDestroy(
      () => backend.signDigest(account, wallet.walletKeyRef, digest),
      () => backend.destroyWalletKey(account, wallet.walletKeyRef),
    );
    assertNothingSignedAfterDestroy(settled);
    await assert.rejects(backend.signDigest(account, wallet.walletKeyRef, digest), isFault('key_destroyed'));
    // The refusals did not poison the pool: another key still signs on the one session.
    const other = await backend.createWalletKey(account);
    assert.equal((await backend.signDigest(account, other.walletKeyRef, digest)).length, 64);
  });

  it('Ed25519: a signature queued when its token key is destroyed answers key_destroyed (not key_not_found) and never reaches C_SignInit', async () => {
    const account = await backend.createAccountKey();
    const wallet = await backend.createWalletKey(account, 'ed25519');
    const message = new Uint8Array(100).fill(1);
    await backend.signEd25519(account, wallet.walletKeyRef, message);
    hsmSignatures.length = 0;
    const settled = await raceDestroy(
      () => backend.signEd25519(account, wallet.walletKeyRef, message),
      () => backend.destroyWalletKey(account, wallet.walletKeyRef),
    );
    assertNothingSignedAfterDestroy(settled);
    const other = await backend.createWalletKey(account, 'ed25519');
    assert.equal((await backend.signEd25519(account, other.walletKeyRef, message)).length, 64);
  });

  it('Ed25519: two destroys of one key at once both succeed; the key is gone and refused with key_destroyed', async () => {
    const account = await backend.createAccountKey();
    const wallet = await backend.createWalletKey(account, 'ed25519');
    const bystander = await backend.createWalletKey(account, 'ed25519');
    const outcomes = await Promise.allSettled([
      backend.destroyWalletKey(account, wallet.walletKeyRef),
      backend.destroyWalletKey(account, wallet.walletKeyRef),
    ]);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'fulfilled' ? 'destroyed' : (o.reason as SignerFault).code)),
      ['destroyed', 'destroyed'],
    );
    await backend.destroyWalletKey(account, wallet.walletKeyRef);
    await assert.rejects(
      backend.signEd25519(account, wallet.walletKeyRef, new Uint8Array(1)),
      isFault('key_destroyed'),
    );
    // Only that key was destroyed.
    assert.equal((await backend.signEd25519(account, bystander.walletKeyRef, new Uint8Array(1))).length, 64);
  });
});

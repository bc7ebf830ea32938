/**
 * Key material never leaves the HSM (the PKCS#11 backend opened in-process on a throwaway SoftHSM token):
 * the root KEK and every unwrapped key refuse CKA_VALUE and are not extractable; references are wrapped
 * blobs of the wrap mechanism's output length; a weak root KEK (extractable, or able to decrypt) is
 * refused at start; a digest that is not 32 bytes is refused; and the in-process sign-rate helper works.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import { createKeyBackend } from '../../../signer/backends/create-key-backend.js';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import { Pkcs11Module } from '../../../signer/backends/pkcs11/pkcs11-module.js';
import { measureBackendSignRate } from '../../../signer/bench/measure-backend-sign-rate.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { initSoftHsmToken, type SoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { pointSoftHsmAt, softHsmBackendConfig } from '../../support/softhsm-conf.js';

const isFault = (code: string, pattern?: RegExp) => (e: unknown) =>
  e instanceof SignerFault && e.code === code && (!pattern || pattern.test(e.message));
const isCkr = (code: number) => (e: unknown) => (e as { code?: number }).code === code;

/** PKCS#11 attribute values by their CKA_ names, as the tests write a template. */
type Attributes = Partial<Record<Extract<keyof typeof pkcs11js, `CKA_${string}`>, pkcs11js.Attribute['value']>>;
/** The PKCS#11 template of `attributes`, in their order. */
const template = (attributes: Attributes): pkcs11js.Template =>
  Object.entries(attributes).map(([name, value]) => ({ type: pkcs11js[name as keyof Attributes], value }));

describe('key material never leaves the HSM (PKCS#11 backend in-process)', function () {
  this.timeout(60_000);
  let dir: string;
  let token: SoftHsmToken;
  let config: Pkcs11BackendConfig;
  let restoreConf: () => void;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-hsm-'));
    token = await initSoftHsmToken({ dir });
    restoreConf = pointSoftHsmAt(token.softhsm2Conf);
    config = softHsmBackendConfig(token);
  });
  after(() => {
    restoreConf?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the root KEK and unwrapped keys refuse CKA_VALUE and are not extractable; refs are wrapped blobs', async () => {
    const backend = Pkcs11Backend.open(config);
    try {
      assert.throws(() => backend.readKekAttribute(pkcs11js.CKA_VALUE), isCkr(pkcs11js.CKR_ATTRIBUTE_SENSITIVE));
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_SENSITIVE)?.[0], 1);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_DECRYPT)?.[0], 0);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_ENCRYPT)?.[0], 0);
      assert.equal(backend.readKekAttribute(pkcs11js.CKA_SIGN)?.[0], 0);
      const account = await backend.createAccountKey();
      const walletKey = await backend.createWalletKey(account);
      // AES key wrap with padding: 32-byte AES key → 40 bytes; SoftHSM's PKCS#8 secp256k1 key → 72 bytes.
      assert.equal(Buffer.from(account.split(':')[3]!, 'base64url').length, 40);
      assert.equal(Buffer.from(walletKey.walletKeyRef.split(':')[3]!, 'base64url').length, 72);
      await backend.signDigest(account, walletKey.walletKeyRef, new Uint8Array(32).fill(7));
      const handles = backend.unwrappedHandlesForTest();
      assert.equal(handles.length, 2, 'account key and wallet key cached as session objects');
      for (const h of handles) {
        assert.throws(
          () => backend.readAttributeForTest(h, pkcs11js.CKA_VALUE),
          isCkr(pkcs11js.CKR_ATTRIBUTE_SENSITIVE),
        );
        assert.equal(backend.readAttributeForTest(h, pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
        assert.equal(backend.readAttributeForTest(h, pkcs11js.CKA_SENSITIVE)?.[0], 1);
        assert.equal(
          backend.readAttributeForTest(h, pkcs11js.CKA_TOKEN)?.[0],
          0,
          'session object: dies with its session',
        );
      }
      // CKM_ECDSA would sign any length: the backend will not.
      for (const length of [0, 31, 33, 64]) {
        await assert.rejects(
          backend.signDigest(account, walletKey.walletKeyRef, new Uint8Array(length)),
          isFault('invalid_request', /32 bytes/),
        );
      }
      // A wallet ref where an account ref belongs (and the reverse) is not a key.
      await assert.rejects(backend.createWalletKey(walletKey.walletKeyRef), isFault('key_not_found'));
      await assert.rejects(
        backend.signDigest(walletKey.walletKeyRef, account, new Uint8Array(32)),
        isFault('key_not_found'),
      );
      // Non-canonical base64url (one blob, one name).
      await assert.rejects(
        backend.signDigest(account + '=', walletKey.walletKeyRef, new Uint8Array(32)),
        isFault('key_not_found'),
      );
      await backend.close();
      // Closing destroys the session objects with their session; a closed backend answers hsm_unavailable.
      await assert.rejects(backend.health(), isFault('hsm_unavailable'));
    } finally {
      await backend.close();
    }
  });

  it('unwraps a new wallet key at its creation as its first signature would: that signature unwraps nothing', async () => {
    const seen = { hits: 0, misses: 0 };
    const backend = Pkcs11Backend.open(config, { cacheHit: () => seen.hits++, cacheMiss: () => seen.misses++ });
    try {
      const account = await backend.createAccountKey();
      const walletKey = await backend.createWalletKey(account);
      const handles = backend.unwrappedHandlesForTest();
      assert.equal(handles.length, 2, 'the account key and the new wallet key, unwrapped');
      for (const h of handles) {
        assert.equal(backend.readAttributeForTest(h, pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
        assert.equal(backend.readAttributeForTest(h, pkcs11js.CKA_SENSITIVE)?.[0], 1);
      }
      const before = { ...seen };
      await backend.signDigest(account, walletKey.walletKeyRef, new Uint8Array(32).fill(9));
      assert.deepEqual(
        { hits: seen.hits - before.hits, misses: seen.misses - before.misses },
        { hits: 2, misses: 0 },
        'the first signature finds both keys unwrapped',
      );
    } finally {
      await backend.close();
    }
  });

  it('refuses a root KEK that is extractable or may decrypt', async () => {
    const module = Pkcs11Module.load(config.modulePath);
    try {
      const session = module.openSession(module.findTokenSlot(config.tokenLabel));
      module.login(session, config.pin);
      /** A token AES-256 key labelled `label` that wraps and unwraps, with `flags` on top. */
      const aes = (label: string, flags: Attributes) =>
        module.p11.C_GenerateKey(
          session,
          { mechanism: pkcs11js.CKM_AES_KEY_GEN },
          template({
            CKA_CLASS: pkcs11js.CKO_SECRET_KEY,
            CKA_VALUE_LEN: 32,
            CKA_TOKEN: true,
            CKA_PRIVATE: true,
            CKA_LABEL: label,
            CKA_WRAP: true,
            CKA_UNWRAP: true,
            ...flags,
          }),
        );
      aes('weak-extractable', { CKA_SENSITIVE: true, CKA_EXTRACTABLE: true, CKA_DECRYPT: false });
      aes('weak-decrypt', { CKA_SENSITIVE: true, CKA_EXTRACTABLE: false, CKA_DECRYPT: true });
      aes('twice', { CKA_SENSITIVE: true, CKA_EXTRACTABLE: false });
      aes('twice', { CKA_SENSITIVE: true, CKA_EXTRACTABLE: false });
      module.closeSession(session);
    } finally {
      module.finalize();
    }
    assert.throws(
      () => Pkcs11Backend.open({ ...config, kekLabel: 'weak-extractable' }),
      isFault('hsm_error', /refused: extractable/),
    );
    assert.throws(
      () => Pkcs11Backend.open({ ...config, kekLabel: 'weak-decrypt' }),
      isFault('hsm_error', /may decrypt/),
    );
    assert.throws(() => Pkcs11Backend.open({ ...config, kekLabel: 'twice' }), isFault('hsm_error', /must be unique/));
    assert.throws(
      () => Pkcs11Backend.open({ ...config, tokenLabel: 'no-such-token' }),
      isFault('hsm_unavailable', /no token labelled/),
    );
  });

  it('measures raw backend signing in-process (createKeyBackend + measureBackendSignRate)', async () => {
    const backend = createKeyBackend({ ...config, sessions: 4 });
    try {
      const raw = await measureBackendSignRate({ backend, durationMs: 1000, concurrency: 4 });
      const finalized = await measureBackendSignRate({ backend, durationMs: 1000, concurrency: 4, finalize: true });
      console.log(
        `      backend signDigest: ${Math.round(raw.perSecond)}/s raw, ${Math.round(finalized.perSecond)}/s with low-S + recovery + address check (4 in flight)`,
      );
      assert.ok(raw.perSecond > 100 && finalized.perSecond > 100);
    } finally {
      await backend.close();
    }
  });
});

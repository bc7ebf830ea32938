/**
 * How the PKCS#11 backend finds an Ed25519 wallet key (signer/backends/pkcs11/ed25519-token-keys.ts), on a
 * throwaway SoftHSM token: a search of the token costs in proportion to the objects it holds, with the signer's
 * main thread held, so a key's handle is remembered when the key is made and, after a restart, for every key
 * already in the token — no signature searches for its key. What a search would refuse stays refused: a key
 * used with another account's reference, and a CKA_ID two keys share. The backend's observer counts the
 * searches (`find_wallet_key`) and the start's one pass over the token (`index_wallet_keys`).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import {
  CKK_EC_EDWARDS,
  CKM_EC_EDWARDS_KEY_PAIR_GEN,
  ED25519_EC_PARAMS,
  ed25519Label,
} from '../../../signer/backends/pkcs11/ed25519-token-keys.js';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import { decodeKeyRef } from '../../../signer/backends/pkcs11/pkcs11-key-ref.js';
import { Pkcs11Module } from '../../../signer/backends/pkcs11/pkcs11-module.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { SignerFault } from '../../../signer/signer-error.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { pointSoftHsmAt, softHsmBackendConfig } from '../../support/softhsm-conf.js';

const isFault = (code: string) => (e: unknown) => e instanceof SignerFault && e.code === code;
const message = new Uint8Array(120).fill(9);

describe('Ed25519 wallet keys found without searching the token', function () {
  this.timeout(120_000);
  let dir: string;
  let config: Pkcs11BackendConfig;
  let restoreConf: () => void;
  /** HSM operations the backends opened by `open` reported, by name. */
  let operations: Map<string, number>;
  /** Closed after each test, whatever it left open (one module per process). */
  let opened: Pkcs11Backend[];

  const open = (overrides: Partial<Pkcs11BackendConfig> = {}) => {
    const backend = Pkcs11Backend.open(
      { ...config, ...overrides },
      { hsmOperation: (op) => operations.set(op, (operations.get(op) ?? 0) + 1) },
    );
    opened.push(backend);
    return backend;
  };
  const searches = () => operations.get('find_wallet_key') ?? 0;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-hsm-ed-lookup-'));
    const token = await initSoftHsmToken({ dir });
    restoreConf = pointSoftHsmAt(token.softhsm2Conf);
    config = { ...softHsmBackendConfig(token), cacheSize: 100 };
    operations = new Map();
    opened = [];
  });
  afterEach(async () => {
    for (const backend of opened) await backend.close();
    restoreConf?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('signs with a key it just made, and after a restart with every key in the token, without a search', async () => {
    let backend = open();
    const a = await backend.createAccountKey();
    const b = await backend.createAccountKey();
    const keysOfA = [];
    for (let i = 0; i < 4; i++) keysOfA.push((await backend.createWalletKey(a, 'ed25519')).walletKeyRef);
    const keyOfB = (await backend.createWalletKey(b, 'ed25519')).walletKeyRef;
    for (const key of keysOfA) assert.equal((await backend.signEd25519(a, key, message)).length, 64);
    await backend.signEd25519(b, keyOfB, message);
    assert.equal(searches(), 0, 'a key made by this backend is never searched for');
    await backend.close();

    operations = new Map();
    backend = open();
    try {
      assert.equal(operations.get('index_wallet_keys'), 1, 'the start looks over the token once');
      for (const key of keysOfA) await backend.signEd25519(a, key, message);
      await backend.signEd25519(b, keyOfB, message);
      assert.equal(searches(), 0, 'after a restart, the keys already in the token are found without a search');

      // Remembered under the account its label names: with the other account's reference it is still refused.
      await assert.rejects(backend.signEd25519(b, keysOfA[0]!, message), isFault('key_not_found'));
      await assert.rejects(backend.signEd25519(a, keyOfB, message), isFault('key_not_found'));
      await backend.signEd25519(a, keysOfA[0]!, message);

      // A destroyed key is forgotten: its reference answers key_destroyed, never a signature.
      await backend.destroyWalletKey(a, keysOfA[1]!);
      await assert.rejects(backend.signEd25519(a, keysOfA[1]!, message), isFault('key_destroyed'));
    } finally {
      await backend.close();
    }
  });

  it('remembers no more keys than its cache holds; the others are found by a search', async () => {
    let backend = open();
    const account = await backend.createAccountKey();
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push((await backend.createWalletKey(account, 'ed25519')).walletKeyRef);
    await backend.close();

    operations = new Map();
    backend = open({ cacheSize: 3 });
    try {
      for (const key of keys) assert.equal((await backend.signEd25519(account, key, message)).length, 64);
      // Three remembered at start (which three follows the token's own order of objects); the two others searched
      // for, and each evicts one the loop may reach later — up to every one of the five, never one twice.
      assert.ok(searches() >= 2 && searches() <= keys.length, `searches: ${searches()}`);
    } finally {
      await backend.close();
    }
  });

  it('leaves a CKA_ID two keys share to the search, which refuses it with hsm_error', async () => {
    let backend = open();
    const account = await backend.createAccountKey();
    const wallet = (await backend.createWalletKey(account, 'ed25519')).walletKeyRef;
    const other = (await backend.createWalletKey(account, 'ed25519')).walletKeyRef;
    await backend.close();

    // A second token key with the same CKA_ID and label, made beside the backend (as another application could).
    const accountHash = createHash('sha256').update(decodeKeyRef(account).blob).digest('hex');
    const module = Pkcs11Module.load(config.modulePath);
    try {
      const session = module.openSession(module.findTokenSlot(config.tokenLabel));
      module.login(session, config.pin);
      module.p11.C_GenerateKeyPair(
        session,
        { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
        [
          { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
          { type: pkcs11js.CKA_EC_PARAMS, value: ED25519_EC_PARAMS },
          { type: pkcs11js.CKA_TOKEN, value: false },
        ],
        [
          { type: pkcs11js.CKA_KEY_TYPE, value: CKK_EC_EDWARDS },
          { type: pkcs11js.CKA_TOKEN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SIGN, value: true },
          { type: pkcs11js.CKA_ID, value: decodeKeyRef(wallet).blob },
          { type: pkcs11js.CKA_LABEL, value: ed25519Label(accountHash) },
        ],
      );
    } finally {
      module.finalize();
    }

    operations = new Map();
    backend = open();
    try {
      await assert.rejects(backend.signEd25519(account, wallet, message), isFault('hsm_error'));
      await backend.signEd25519(account, other, message);
      assert.equal(searches(), 1, 'only the shared CKA_ID was searched for');
    } finally {
      await backend.close();
    }
  });
});

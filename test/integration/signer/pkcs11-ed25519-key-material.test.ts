/**
 * An Ed25519 wallet key in the PKCS#11 token (signer/backends/pkcs11/ed25519-token-keys.ts), inspected
 * through the module itself on a throwaway SoftHSM token: a persistent token object with the reference's
 * CKA_ID, labelled with its account, sensitive, never extractable, not modifiable, refusing CKA_VALUE; no
 * public or session object left behind; after destroy, no object with that CKA_ID remains.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pkcs11js from 'pkcs11js';
import { CKK_EC_EDWARDS, ed25519Label } from '../../../signer/backends/pkcs11/ed25519-token-keys.js';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import { decodeKeyRef } from '../../../signer/backends/pkcs11/pkcs11-key-ref.js';
import { Pkcs11Module } from '../../../signer/backends/pkcs11/pkcs11-module.js';
import type { Pkcs11BackendConfig } from '../../../signer/config/signer-config.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { pointSoftHsmAt, softHsmBackendConfig } from '../../support/softhsm-conf.js';

const isCkr = (code: number) => (e: unknown) => (e as { code?: number }).code === code;

describe('Ed25519 wallet keys in the PKCS#11 token', function () {
  this.timeout(60_000);
  let dir: string;
  let config: Pkcs11BackendConfig;
  let restoreConf: () => void;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-hsm-ed-'));
    const token = await initSoftHsmToken({ dir });
    restoreConf = pointSoftHsmAt(token.softhsm2Conf);
    config = softHsmBackendConfig(token);
  });
  after(() => {
    restoreConf?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `fn` on a logged-in session of the token, the backend closed (one module per process). */
  async function inspect<T>(fn: (module: Pkcs11Module, session: pkcs11js.Handle) => T): Promise<T> {
    const module = Pkcs11Module.load(config.modulePath);
    try {
      const session = module.openSession(module.findTokenSlot(config.tokenLabel));
      module.login(session, config.pin);
      return fn(module, session);
    } finally {
      module.finalize();
    }
  }

  const byId = (module: Pkcs11Module, session: pkcs11js.Handle, id: Buffer) =>
    module.findObjects(session, [{ type: pkcs11js.CKA_ID, value: id }]);

  it('is a sensitive, non-extractable, non-modifiable token object labelled with its account; destroy removes it', async () => {
    let backend = Pkcs11Backend.open(config);
    const account = await backend.createAccountKey();
    const wallet = await backend.createWalletKey(account, 'ed25519');
    await backend.close();
    const id = decodeKeyRef(wallet.walletKeyRef).blob;
    const accountHash = createHash('sha256').update(decodeKeyRef(account).blob).digest('hex');

    await inspect((module, session) => {
      const found = byId(module, session, id);
      assert.equal(found.length, 1, 'only the private key is kept: the public half was a session object');
      const key = found[0]!;
      const read = (type: number) => module.p11.C_GetAttributeValue(session, key, [{ type }])[0]?.value;
      assert.equal(read(pkcs11js.CKA_CLASS)?.readUInt32LE(0), pkcs11js.CKO_PRIVATE_KEY);
      assert.equal(read(pkcs11js.CKA_KEY_TYPE)?.readUInt32LE(0), CKK_EC_EDWARDS);
      assert.equal(read(pkcs11js.CKA_TOKEN)?.[0], 1);
      assert.equal(read(pkcs11js.CKA_SENSITIVE)?.[0], 1);
      assert.equal(read(pkcs11js.CKA_EXTRACTABLE)?.[0], 0);
      assert.equal(read(pkcs11js.CKA_MODIFIABLE)?.[0], 0);
      assert.equal(read(pkcs11js.CKA_LABEL)?.toString('utf8'), ed25519Label(accountHash));
      assert.throws(() => read(pkcs11js.CKA_VALUE), isCkr(pkcs11js.CKR_ATTRIBUTE_SENSITIVE));
      // The label that binds it to its account cannot be rewritten.
      assert.throws(() =>
        module.p11.C_SetAttributeValue(session, key, [
          { type: pkcs11js.CKA_LABEL, value: ed25519Label('0'.repeat(64)) },
        ]),
      );
    });

    backend = Pkcs11Backend.open(config);
    await backend.destroyWalletKey(account, wallet.walletKeyRef);
    await backend.close();
    await inspect((module, session) => assert.deepEqual(byId(module, session, id), []));
  });
});

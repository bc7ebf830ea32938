/**
 * The pay bench's ceiling for the signer beside the raw HSM rate (bench/support/signer-ratio-bound.ts), on a
 * throwaway SoftHSM token: the signer's required work per signature (digest, low-S, yParity and the recovery check)
 * is timed on real signatures of the backend, and the bound is raw ÷ (raw + that work), as its line prints it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { measureSignerRatioBound, signerRatioBoundLine } from '../../../bench/support/signer-ratio-bound.js';
import { Pkcs11Backend } from '../../../signer/backends/pkcs11/pkcs11-backend.js';
import { initSoftHsmToken } from '../../../ops/softhsm/init-token.js';
import { pointSoftHsmAt, softHsmBackendConfig } from '../../support/softhsm-conf.js';

describe("bench: the signer's ceiling beside the raw HSM rate", function () {
  this.timeout(60_000);
  let dir: string;
  let restoreConf: () => void;
  let backend: Pkcs11Backend;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bound-'));
    const token = await initSoftHsmToken({ dir });
    restoreConf = pointSoftHsmAt(token.softhsm2Conf);
    backend = Pkcs11Backend.open(softHsmBackendConfig(token));
  });
  after(async () => {
    await backend?.close();
    restoreConf?.();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('times the required work on real signatures and bounds the ratio by it', async () => {
    const account = await backend.createAccountKey();
    const bound = await measureSignerRatioBound(
      backend,
      account,
      500,
      '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      8,
    );
    assert.equal(bound.rawMicros, 500);
    assert.ok(bound.digestMicros > 0 && Number.isFinite(bound.digestMicros));
    // A recovery at least: libsecp256k1's is tens of µs, never below one.
    assert.ok(bound.finalizeMicros > 1 && Number.isFinite(bound.finalizeMicros));
    assert.equal(bound.bound, 500 / (500 + bound.digestMicros + bound.finalizeMicros));
    assert.ok(bound.bound > 0 && bound.bound < 1);
    const line = signerRatioBoundLine(bound, 0.5, 900);
    assert.ok(line.includes(`at most ${bound.bound.toFixed(2)}× raw`), line);
    assert.match(line, /measured 0\.50×/);
    // Without a measured ratio (bench:signer prints its own per variant): the bound alone.
    const alone = signerRatioBoundLine(bound);
    assert.ok(alone.endsWith('with nothing else'), alone);
  });
});

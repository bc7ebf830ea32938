/**
 * A throwaway SoftHSM test token, for the suites that load the PKCS#11 module in-process rather than in a signer
 * child: SoftHSM pointed at its configuration (`pointSoftHsmAt`), and the backend's configuration for it
 * (`softHsmBackendConfig`).
 * What it defends: the process's environment as it was before the suite — the function `pointSoftHsmAt` returns
 * puts back the previous value, or removes the variable if there was none.
 * What it does not: re-initialise a module already loaded under the previous configuration.
 */
import fs from 'node:fs';
import type { SoftHsmToken } from '../../ops/softhsm/init-token.js';
import type { Pkcs11BackendConfig } from '../../signer/config/signer-config.js';

/** Sets SOFTHSM2_CONF (read by SoftHSM at C_Initialize) to the token's; returns what puts the previous value back. */
export function pointSoftHsmAt(softhsm2Conf: string): () => void {
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = softhsm2Conf;
  return () => {
    if (previous === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previous;
  };
}

/**
 * The PKCS#11 backend's configuration for a throwaway test token (ops/softhsm/init-token.ts), as the
 * in-process suites open it: two sessions, inline signing when alone, a small key cache.
 */
export function softHsmBackendConfig(token: SoftHsmToken, sessions = 2): Pkcs11BackendConfig {
  return {
    kind: 'pkcs11',
    modulePath: token.modulePath,
    tokenLabel: token.tokenLabel,
    pin: fs.readFileSync(token.pinFile, 'utf8').trim(),
    kekLabel: token.kekLabel,
    sessions,
    signInline: 'when_alone',
    cacheSize: 10,
    cacheTtlMs: 60_000,
  };
}

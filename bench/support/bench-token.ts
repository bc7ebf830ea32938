/**
 * The benches' two ways into a SoftHSM token they made (ops/softhsm/init-token.ts): the signer's PKCS#11 backend
 * opened in the bench's own process, for the raw signing ceilings; and the environment a signer process started
 * on that token gets, with the per-wallet ceilings raised (a bench signs thousands a second on one wallet, far past
 * the signer's defaults; the per-signature maximum keeps its default, bench payments being 0.001 USDC).
 *
 * Limits: the caller points this process's SOFTHSM2_CONF at the token before opening the backend, and closes it.
 */
import { Pkcs11Backend } from '../../signer/backends/pkcs11/pkcs11-backend.js';
import type { SoftHsmToken } from '../../ops/softhsm/init-token.js';
import { GENEROUS_SIGNER_LIMITS } from '../../test/support/signer-harness.js';
import { softHsmBackendConfig } from '../../test/support/softhsm-conf.js';

/** The backend as the signer runs it by default (4 sessions, a lone signature inline), with a small key cache. */
export function openBenchBackend(token: SoftHsmToken): Pkcs11Backend {
  return Pkcs11Backend.open({ ...softHsmBackendConfig(token, 4), cacheSize: 100, cacheTtlMs: 600_000 });
}

/** A signer process's environment on the token: its module, labels, PIN file and SOFTHSM2_CONF, and raised ceilings. */
export function benchSignerEnv(token: SoftHsmToken) {
  return {
    TREASURY_PKCS11_MODULE: token.modulePath,
    TREASURY_PKCS11_TOKEN_LABEL: token.tokenLabel,
    TREASURY_PKCS11_KEK_LABEL: token.kekLabel,
    TREASURY_PKCS11_PIN_FILE: token.pinFile,
    SOFTHSM2_CONF: token.softhsm2Conf,
    ...GENEROUS_SIGNER_LIMITS,
  };
}

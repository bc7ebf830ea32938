/**
 * One error shape for a refused configuration in every process (base/config-error.ts): the API's, the
 * signer's and the gate's loaders each throw a `ConfigError` with code `config_invalid`, the process in
 * `details.process` and each problem, naming its variable, in `details.problems`.
 */
import assert from 'node:assert/strict';
import { assertConfigRefused } from '../../support/config-refusal.js';
import { BaseError } from '../../../base/base-error.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';
import { loadGateConfig } from '../../../src/gate/gate-config.js';
import { loadSignerConfig } from '../../../signer/config/signer-config.js';

/** `load` throws a ConfigError of `process` whose problems name `variable`, a BaseError like every error here. */
function refusedAs(load: () => unknown, process: string, variable: string): void {
  assert.ok(assertConfigRefused(load, process, variable) instanceof BaseError);
}

describe('ConfigError: one shape for every process', () => {
  it('the API', () => {
    refusedAs(() => loadAppConfig({ TREASURY_PORT: 'eighty' }), 'api', 'TREASURY_PORT');
    refusedAs(() => loadAppConfig({ TREASURY_RPC_URLS: '{' }), 'api', 'TREASURY_RPC_URLS');
    refusedAs(() => loadAppConfig({ TREASURY_TRUSTED_PROXIES: 'nowhere' }), 'api', 'TREASURY_TRUSTED_PROXIES');
  });

  it('the signer', () => {
    const env = { TREASURY_SIGNER_SOCKET: '/tmp/treasury-config-error.sock', TREASURY_PKCS11_PIN: 'secret-pin-42' };
    refusedAs(() => loadSignerConfig({ ...env, TREASURY_PKCS11_SESSIONS: '0' }), 'signer', 'TREASURY_PKCS11_SESSIONS');
    refusedAs(
      () => loadSignerConfig({ ...env, TREASURY_SIGNER_ALLOWED_TOKENS: ' ' }),
      'signer',
      'TREASURY_SIGNER_ALLOWED_TOKENS',
    );
  });

  it('the gate', () => {
    refusedAs(() => loadGateConfig({ GATE_PORT: 'x' }), 'gate', 'GATE_PORT');
  });
});

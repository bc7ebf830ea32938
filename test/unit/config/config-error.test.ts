/**
 * One error shape for a refused configuration in every process (base/config-error.ts): the API's, the
 * signer's and the gate's loaders each throw a `ConfigError` with code `config_invalid`, the process in
 * `details.process` and each problem, naming its variable, in `details.problems`.
 */
import assert from 'node:assert/strict';
import { ConfigError } from '../../../base/config-error.js';
import { BaseError } from '../../../base/base-error.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';
import { loadGateConfig } from '../../../src/gate/gate-config.js';
import { loadSignerConfig } from '../../../signer/config/signer-config.js';

/** `load` throws a ConfigError of `process` whose problems name `variable`. */
function refusedAs(load: () => unknown, process: string, variable: string): void {
  assert.throws(load, (err: unknown) => {
    assert.ok(err instanceof ConfigError && err instanceof BaseError, String(err));
    assert.equal(err.code, 'config_invalid');
    assert.equal(err.details.process, process);
    assert.ok(
      err.details.problems.some((p) => p.startsWith(variable)),
      JSON.stringify(err.details.problems),
    );
    assert.ok(err.message.includes(variable));
    return true;
  });
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

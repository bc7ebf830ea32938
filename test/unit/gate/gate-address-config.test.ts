/**
 * GATE_PUBLIC_URL (src/gate/gate-config.ts, the shared schema of src/shared/gate-address-schema.ts): a bare
 * http(s) origin, stored canonical; anything the public catalogue could show two ways is refused at start, and
 * plain HTTP is refused in production mode.
 */
import assert from 'node:assert/strict';
import { GateConfigError, loadGateConfig } from '../../../src/gate/gate-config.js';

const TOKEN = 'xx_pat_gategategategategategategategategate1234';
const load = (env: Record<string, string>) => loadGateConfig({ GATE_TOKEN: TOKEN, ...env });

describe('gate address: GATE_PUBLIC_URL', () => {
  it('is optional, and stored as its origin', () => {
    assert.equal(load({}).publicUrl, undefined);
    assert.equal(load({ GATE_PUBLIC_URL: 'https://Gate.Example:443/' }).publicUrl, 'https://gate.example');
    assert.equal(load({ GATE_PUBLIC_URL: 'http://127.0.0.1:8404' }).publicUrl, 'http://127.0.0.1:8404');
  });

  it('refuses a path, query, fragment, credentials, another scheme or white space', () => {
    for (const url of [
      'https://gate.example/prefix',
      'https://gate.example/?a=1',
      'https://gate.example#x',
      'https://u:p@gate.example',
      'ftp://gate.example',
      'https://gate.example/\n',
      'gate.example',
    ])
      assert.throws(() => load({ GATE_PUBLIC_URL: url }), GateConfigError, url);
  });

  it('must be https in production mode', () => {
    assert.throws(
      () => load({ GATE_PUBLIC_URL: 'http://gate.example', NODE_ENV: 'production' }),
      (err: GateConfigError) => err.details.problems.some((p) => p.includes('https')),
    );
    assert.equal(
      load({ GATE_PUBLIC_URL: 'https://gate.example', TREASURY_ENV: 'production', GATE_METRICS_PORT: '9465' })
        .publicUrl,
      'https://gate.example',
    );
  });

  it("refuses the sandbox's switches in production mode, naming each, and keeps them outside it", () => {
    const sandbox = { XX_ALLOW_LOCAL_ONLY: '1', GATE_ALLOW_PRIVATE_ORIGINS: '1' };
    assert.throws(
      () => load({ ...sandbox, NODE_ENV: 'production' }),
      (err: GateConfigError) =>
        ['XX_ALLOW_LOCAL_ONLY', 'GATE_ALLOW_PRIVATE_ORIGINS'].every((name) =>
          err.details.problems.some((p) => p.startsWith(`${name}:`)),
        ),
    );
    const dev = load(sandbox);
    assert.equal(dev.allowPrivateOrigins, true);
    assert.equal(dev.paywallEnv.XX_ALLOW_LOCAL_ONLY, '1');
    const production = { XX_ALLOW_LOCAL_ONLY: '0', TREASURY_ENV: 'production', GATE_METRICS_PORT: '9465' };
    assert.equal(load(production).allowPrivateOrigins, false);
  });
});

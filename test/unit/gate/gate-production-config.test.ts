/**
 * The gate's upstream URLs in production mode (src/gate/gate-config.ts, the rule of
 * src/shared/plain-http-upstream.ts): GATE_API_URL (the PAT travels to it on every catalogue read),
 * FACILITATOR_URL and GATE_SOLANA_FACILITATOR_URL (their answers decide whether content is served) must be
 * https, or http to this machine only (localhost, 127.0.0.0/8, ::1: a sidecar). Outside production mode
 * http anywhere stays allowed (the sandbox, the tests). And /metrics: production mode needs a listener of its own
 * (GATE_METRICS_PORT) or the operator's GATE_METRICS_ON_PUBLIC_LISTENER=1; the two together are refused anywhere.
 */
import assert from 'node:assert/strict';
import { GateConfigError, loadGateConfig } from '../../../src/gate/gate-config.js';

const TOKEN = 'xx_pat_gategategategategategategategategate1234';
const SOUND = {
  GATE_TOKEN: TOKEN,
  NODE_ENV: 'production',
  GATE_PUBLIC_URL: 'https://gate.example.com',
  GATE_API_URL: 'https://treasury.example.com',
  FACILITATOR_URL: 'https://facilitator.example.com',
  GATE_SOLANA_FACILITATOR_URL: 'https://solana-facilitator.example.com',
  GATE_METRICS_PORT: '9465',
};
const load = (env: Record<string, string>) => loadGateConfig({ ...SOUND, ...env });
const UPSTREAMS = ['GATE_API_URL', 'FACILITATOR_URL', 'GATE_SOLANA_FACILITATOR_URL'] as const;

/** Asserts a GateConfigError whose problems name `name` (as `NAME: …`). */
function refusedNaming(name: string) {
  return (err: unknown) => {
    assert.ok(err instanceof GateConfigError, String(err));
    assert.ok(
      err.details.problems.some((p) => p.startsWith(`${name}:`) && p.includes('https')),
      err.details.problems.join('\n'),
    );
    return true;
  };
}

describe('gate production mode: upstream URLs', () => {
  it('control: https upstreams load in production mode', () => {
    const config = load({});
    assert.equal(config.apiUrl, 'https://treasury.example.com');
    assert.equal(config.facilitatorUrl, 'https://facilitator.example.com');
  });

  it('refuses http:// to another host for each upstream, naming it', () => {
    for (const name of UPSTREAMS)
      for (const url of [
        'http://api.internal:8402',
        'http://api:8402',
        'http://10.0.0.5:8402',
        'http://203.0.113.7',
        'http://[2001:db8::1]:8402',
        'http://localhost.example.com',
      ])
        assert.throws(() => load({ [name]: url }), refusedNaming(name), `${name}=${url}`);
  });

  it('names every plain-http upstream at once, and TREASURY_ENV=production counts too', () => {
    const env = { NODE_ENV: '', TREASURY_ENV: 'production', GATE_API_URL: 'http://api.internal:8402' };
    assert.throws(
      () => load({ ...env, FACILITATOR_URL: 'http://facilitator.internal' }),
      (err: unknown) => refusedNaming('GATE_API_URL')(err) && refusedNaming('FACILITATOR_URL')(err),
    );
  });

  it('accepts http:// to loopback (a sidecar): 127.0.0.0/8, ::1, localhost', () => {
    for (const name of UPSTREAMS)
      for (const url of ['http://127.0.0.1:8402', 'http://127.0.0.2', 'http://[::1]:4022', 'http://localhost:4022'])
        assert.doesNotThrow(() => load({ [name]: url }), `${name}=${url}`);
    // The default platform URL is loopback: production mode with GATE_API_URL unset still loads.
    assert.equal(loadGateConfig({ ...SOUND, GATE_API_URL: undefined }).apiUrl, 'http://127.0.0.1:8402');
  });

  it('keeps http anywhere outside production mode', () => {
    const config = load({ NODE_ENV: 'development', GATE_API_URL: 'http://api.internal:8402' });
    assert.equal(config.apiUrl, 'http://api.internal:8402');
  });
});

describe('gate production mode: the metrics listener', () => {
  it('refuses /metrics on the gate listener (no GATE_METRICS_PORT), naming GATE_METRICS_PORT', () => {
    assert.throws(
      () => loadGateConfig({ ...SOUND, GATE_METRICS_PORT: undefined }),
      (err: unknown) =>
        err instanceof GateConfigError && err.details.problems.some((p) => p.startsWith('GATE_METRICS_PORT:')),
    );
  });

  it('accepts a metrics listener (127.0.0.1 unless GATE_METRICS_HOST), or the explicit opt-out', () => {
    assert.deepEqual(load({}).metricsListener, { host: '127.0.0.1', port: 9465 });
    assert.deepEqual(load({ GATE_METRICS_HOST: '10.0.0.7' }).metricsListener, { host: '10.0.0.7', port: 9465 });
    const optedOut = loadGateConfig({ ...SOUND, GATE_METRICS_PORT: undefined, GATE_METRICS_ON_PUBLIC_LISTENER: '1' });
    assert.equal(optedOut.metricsListener, undefined);
  });

  it('outside production mode: /metrics on the gate listener by default; a port and the opt-out together are refused', () => {
    assert.equal(loadGateConfig({ GATE_TOKEN: TOKEN }).metricsListener, undefined);
    assert.throws(
      () => loadGateConfig({ GATE_TOKEN: TOKEN, GATE_METRICS_PORT: '9465', GATE_METRICS_ON_PUBLIC_LISTENER: '1' }),
      (err: unknown) =>
        err instanceof GateConfigError &&
        err.details.problems.some((p) => p.startsWith('GATE_METRICS_ON_PUBLIC_LISTENER:')),
    );
  });
});

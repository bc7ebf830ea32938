/**
 * The gate's 402 names the resource at the gate's public address: with GATE_PUBLIC_URL, the challenge's resource URL
 * is the public scheme and host (routed by host: the routed `<slug>.<GATE_BASE_DOMAIN>` with the public port),
 * never a host the buyer wrote into its Host header; without it, the buyer's Host, as the gate was reached.
 */
import assert from 'node:assert/strict';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';
import { rawExchange } from './raw-http.js';

describe('gate: the 402 prices the resource at the public address', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  const gates: TestGate[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_BASE_DOMAIN: 'gate.test',
      ...env,
    });
    gates.push(gate);
    return gate;
  };
  const resourceOf = async (gate: TestGate, target: string, host: string) => {
    const answer = await rawExchange(gate.url, { target, headers: { Host: host } });
    assert.equal(answer.status, 402, answer.body);
    return (JSON.parse(answer.body) as PaymentRequired).resource?.url;
  };

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
  });
  afterEach(async () => {
    for (const gate of gates.splice(0)) await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('routed by prefix: the public scheme and host, not a hostile Host', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://gate.test:8443' });
    const url = await resourceOf(gate, `/${GATE_SLUG}/paid?x=1`, 'evil.example:1');
    assert.equal(url, `https://gate.test:8443/${GATE_SLUG}/paid?x=1`);
  });

  it('routed by host: the routed name with the public port, not the buyer’s port', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://gate.test:8443' });
    const url = await resourceOf(gate, '/paid', `${GATE_SLUG}.gate.test:1`);
    assert.equal(url, `https://${GATE_SLUG}.gate.test:8443/paid`);
  });

  it('control: without GATE_PUBLIC_URL, the buyer’s Host', async () => {
    const gate = await start();
    const url = await resourceOf(gate, `/${GATE_SLUG}/paid`, 'buyer.example:7');
    assert.equal(url, `http://buyer.example:7/${GATE_SLUG}/paid`);
  });
});

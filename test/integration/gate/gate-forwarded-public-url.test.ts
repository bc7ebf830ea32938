/**
 * The scheme and host an origin is told the buyer reached the gate by (src/gate/forwarded-address.ts, written by
 * proxy-headers.ts), through an in-process gate and a real origin on loopback:
 * - with GATE_PUBLIC_URL https (a TLS front before the gate's plain http listener), X-Forwarded-Proto is `https`
 *   and X-Forwarded-Host the public URL's host and port — for a paid request and for an unpaid pass alike, whatever
 *   Host, X-Forwarded-Proto, X-Forwarded-Host or Forwarded the buyer sends; routed by host, the host is the routed
 *   `<slug>.<GATE_BASE_DOMAIN>` with the public URL's port, not the port of the buyer's Host;
 * - without it, as the gate's own listener was reached: `http` and the buyer's Host, never a scheme a buyer's
 *   header claims.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';
import { rawExchange } from './raw-http.js';

/** What a buyer sends to claim another scheme and host than the gate's. */
const SPOOFED = {
  'X-Forwarded-Proto': 'http',
  'X-Forwarded-Host': 'evil.example',
  'X-Forwarded-Port': '80',
  Forwarded: 'for=6.6.6.6;proto=http;host=evil.example',
  'X-Forwarded-Scheme': 'http',
};

describe('gate: the forwarded scheme and host come from GATE_PUBLIC_URL', function () {
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

  /** A paid GET of `/paid` at `gate` with `headers` (Host among them, or the gate's); the origin's view of it. */
  async function paidThrough(gate: TestGate, target: string, headers: Record<string, string>) {
    const challengeAnswer = await rawExchange(gate.url, { target, headers });
    assert.equal(challengeAnswer.status, 402, challengeAnswer.body);
    const challenge = JSON.parse(challengeAnswer.body) as PaymentRequired;
    const signature = encodePaymentPayload(await signExactPayment(challenge.accepts[0]!));
    const before = origin.requests.length;
    const paid = await rawExchange(gate.url, { target, headers: { ...headers, 'PAYMENT-SIGNATURE': signature } });
    assert.equal(paid.status, 200, paid.body);
    assert.ok(paid.headers['payment-response'], 'settled');
    assert.equal(origin.requests.length, before + 1, 'the origin ran once');
    return origin.requests.at(-1)!.headers;
  }

  /** The unpaid pass of `/health` (a bodiless GET no endpoint sells); the origin's view of it. */
  async function passedThrough(gate: TestGate, target: string, headers: Record<string, string>) {
    const answer = await rawExchange(gate.url, { target, headers });
    assert.equal(answer.status, 200, answer.body);
    return origin.requests.at(-1)!.headers;
  }

  const forwardingOf = (seen: http.IncomingHttpHeaders) => ({
    proto: seen['x-forwarded-proto'],
    host: seen['x-forwarded-host'],
    forwarded: seen.forwarded,
    port: seen['x-forwarded-port'],
    scheme: seen['x-forwarded-scheme'],
  });

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
  });
  afterEach(async () => {
    for (const gate of gates.splice(0)) {
      await gate.app.ledger.flush();
      await gate.stop();
    }
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('behind a TLS front, routed by prefix: https and the public host, whatever the buyer claims', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://gate.test:8443' });
    const headers = { ...SPOOFED, Host: 'evil.example:1' };
    const want = { proto: 'https', host: 'gate.test:8443', forwarded: undefined, port: undefined, scheme: undefined };
    assert.deepEqual(forwardingOf(await paidThrough(gate, `/${GATE_SLUG}/paid?x=1`, headers)), want);
    assert.deepEqual(forwardingOf(await passedThrough(gate, `/${GATE_SLUG}/health`, headers)), want);
    assert.equal(origin.requests.at(-1)!.headers['x-forwarded-prefix'], `/${GATE_SLUG}`);
  });

  it('behind a TLS front on its default port: the public host without a port', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://Gate.Example.com:443/' });
    const seen = await paidThrough(gate, `/${GATE_SLUG}/paid`, { ...SPOOFED, Host: 'evil.example' });
    assert.equal(seen['x-forwarded-proto'], 'https');
    assert.equal(seen['x-forwarded-host'], 'gate.example.com');
  });

  it('behind a TLS front, routed by host: the routed name with the public port, not the buyer’s port', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://gate.test:8443' });
    const headers = { ...SPOOFED, Host: `${GATE_SLUG.toUpperCase()}.gate.test:1` };
    const want = {
      proto: 'https',
      host: `${GATE_SLUG}.gate.test:8443`,
      forwarded: undefined,
      port: undefined,
      scheme: undefined,
    };
    assert.deepEqual(forwardingOf(await paidThrough(gate, '/paid', headers)), want);
    assert.deepEqual(forwardingOf(await passedThrough(gate, '/health', headers)), want);
    assert.equal(origin.requests.at(-1)!.headers['x-forwarded-prefix'], undefined);
  });

  it('control: without GATE_PUBLIC_URL, http and the buyer’s Host; a buyer’s https claim is not kept', async () => {
    const gate = await start();
    const host = new URL(gate.url).host;
    const claims = {
      ...SPOOFED,
      'X-Forwarded-Proto': 'https',
      Forwarded: 'proto=https',
      'X-Forwarded-Scheme': 'https',
    };
    const seen = await paidThrough(gate, `/${GATE_SLUG}/paid`, claims);
    assert.deepEqual(forwardingOf(seen), {
      proto: 'http',
      host,
      forwarded: undefined,
      port: undefined,
      scheme: undefined,
    });
  });
});

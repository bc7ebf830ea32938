/**
 * Where the gate serves Prometheus /metrics, and the scheme its 402 challenge names (src/gate/gate-config.ts,
 * gate-app.ts, gate-server.ts), through real listeners on loopback:
 * - by default /metrics is the gate's own route (200), as before;
 * - with GATE_METRICS_PORT it is served only on a listener of its own (200 there, its other paths 404), and the
 *   gate's listener answers /metrics as any unknown path (404 `gate_seller_not_found`); closing the gate closes
 *   the metrics listener too;
 * - the real entry point (src/gate/main.ts) in production mode refuses to start without GATE_METRICS_PORT (or
 *   GATE_METRICS_ON_PUBLIC_LISTENER=1), naming it; with it, it starts, and SIGTERM closes the metrics listener last;
 * - the challenge's resource URL is `http://` as today with no GATE_PUBLIC_URL, whatever X-Forwarded-Proto a
 *   client sends, and takes GATE_PUBLIC_URL's `https` and host when the gate is declared behind a TLS front —
 *   where the paid round trip still settles.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { closedPortUrl, startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import {
  GATE_SLUG,
  GATE_TOKEN,
  startOrigin,
  startTestGate,
  tableCatalogue,
  type TestGate,
  type TestOrigin,
} from './gate-fakes.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The gate's metrics listener's base URL (GATE_METRICS_PORT=0: the port the system chose). */
function metricsUrlOf(gate: TestGate): string {
  const server = gate.app.metricsServer;
  assert.ok(server, 'a metrics listener');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The 402 challenge of `url`. */
async function challengeOf(url: string, headers: Record<string, string> = {}): Promise<PaymentRequired> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 402, `${url} challenges`);
  return (await res.json()) as PaymentRequired;
}

interface Run {
  code: number | null;
  lines: string[];
}

/** src/gate/main.ts with only `env` (and PATH/HOME); `whenReady` runs once it logged `treasury-gate ready`. */
function runGate(env: Record<string, string>, whenReady?: (pid: number) => void): Promise<Run> {
  const child = spawn(process.execPath, nodeArgsFor('src/gate/main.ts'), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const seen = (c: Buffer) => {
    output += c.toString('utf8');
    if (whenReady && output.includes('"msg":"treasury-gate ready"')) {
      const ready = whenReady;
      whenReady = undefined;
      ready(child.pid!);
    }
  };
  child.stdout.on('data', seen);
  child.stderr.on('data', seen);
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, lines: output.split('\n').filter((l) => l.trim() !== '') });
    }),
  );
}

describe('gate: the metrics listener and the challenge scheme', function () {
  this.timeout(60_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  const gates: TestGate[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, ...env });
    gates.push(gate);
    return gate;
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

  it('control: without GATE_METRICS_PORT the gate serves /metrics on its own listener', async () => {
    const gate = await start();
    assert.equal(gate.app.metricsServer, undefined);
    const res = await fetch(`${gate.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^# HELP /m);
  });

  it('with GATE_METRICS_PORT: /metrics only on its own listener, 404 like any unknown path on the gate’s', async () => {
    const gate = await start({ GATE_METRICS_PORT: '0' });
    const metricsUrl = metricsUrlOf(gate);
    assert.notEqual(metricsUrl, gate.url);

    const unknown = await fetch(`${gate.url}/no-such-seller`);
    const publicMetrics = await fetch(`${gate.url}/metrics`);
    assert.equal(publicMetrics.status, 404);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await publicMetrics.json(), await unknown.json());

    const scraped = await fetch(`${metricsUrl}/metrics`);
    assert.equal(scraped.status, 200);
    assert.match(scraped.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await scraped.text(), /^# HELP /m);
    // The metrics listener serves nothing else: not the gate's routes, not another method.
    for (const p of ['/livez', `/${GATE_SLUG}/paid`, '/metrics/'])
      assert.equal((await fetch(`${metricsUrl}${p}`)).status, 404, p);
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 404);

    await gates.pop()!.stop();
    const after = await fetch(`${metricsUrl}/metrics`).then(
      () => 'answered',
      () => 'refused',
    );
    assert.equal(after, 'refused', 'closing the gate closed its metrics listener');
  });

  it('the challenge names http:// with no GATE_PUBLIC_URL, whatever X-Forwarded-Proto says', async () => {
    const gate = await start();
    const url = `${gate.url}/${GATE_SLUG}/paid?x=1`;
    assert.equal((await challengeOf(url)).resource.url, url);
    const spoofed = await challengeOf(url, { 'x-forwarded-proto': 'https', forwarded: 'proto=https' });
    assert.equal(spoofed.resource.url, url, 'a client header does not choose the scheme');
  });

  it('behind a TLS front (GATE_PUBLIC_URL https) the challenge names https:// and the public host, and the paid round trip settles', async () => {
    const gate = await start({ GATE_PUBLIC_URL: 'https://gate.example.com' });
    const url = `${gate.url}/${GATE_SLUG}/paid?x=1`;
    const challenge = await challengeOf(url);
    assert.equal(challenge.resource.url, `https://gate.example.com/${GATE_SLUG}/paid?x=1`);
    const paid = await fetch(url, {
      headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(await signExactPayment(challenge.accepts[0]!)) },
    });
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.ok(paid.headers.get('payment-response'), 'settled');
  });

  it('the entry point in production mode refuses to start without GATE_METRICS_PORT, naming it', async () => {
    const env = {
      NODE_ENV: 'production',
      GATE_TOKEN,
      GATE_PORT: '0',
      GATE_API_URL: await closedPortUrl(),
      GATE_LOG_LEVEL: 'info',
    };
    // A gate that does start (no refusal) is stopped once ready, so the assertions below say so.
    const refused = await runGate(env, (pid) => process.kill(pid, 'SIGTERM'));
    assert.equal(refused.code, 1, refused.lines.join('\n'));
    const line = JSON.parse(refused.lines.at(-1)!) as { msg: string; problems?: string[] };
    assert.equal(line.msg, 'treasury-gate failed to start');
    assert.ok(
      line.problems?.some((p) => p.startsWith('GATE_METRICS_PORT:')),
      refused.lines.join('\n'),
    );

    // With a metrics listener it starts; SIGTERM closes that listener, last, and the exit is clean.
    const started = await runGate({ ...env, GATE_METRICS_PORT: '0' }, (pid) => process.kill(pid, 'SIGTERM'));
    assert.equal(started.code, 0, started.lines.join('\n'));
    const lines = started.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const ready = lines.find((l) => l.msg === 'treasury-gate ready');
    assert.match(String(ready?.metrics_url), /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const steps = lines
      .filter((l) => l.msg === 'shutdown step')
      .sort((x, y) => Number(x.position) - Number(y.position))
      .map((l) => [l.step, l.outcome]);
    assert.deepEqual(steps.at(-1), ['metrics_listener', 'closed'], started.lines.join('\n'));

    // The operator's explicit word that a proxy keeps /metrics from the public is accepted too.
    const optedOut = await runGate({ ...env, GATE_METRICS_ON_PUBLIC_LISTENER: '1' }, (pid) =>
      process.kill(pid, 'SIGTERM'),
    );
    assert.equal(optedOut.code, 0, optedOut.lines.join('\n'));
  });
});

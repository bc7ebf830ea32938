/**
 * The gate in front of an HTTPS origin, as most sellers run one: the gate process (its entry point, as
 * deployed) connects over TLS and checks the origin's certificate against the trust store it was started with.
 * An origin whose certificate the gate does not trust gets nothing forwarded: 502 `gate_origin_unreachable`.
 * The origin's certificate is made for the test (openssl) and trusted through NODE_EXTRA_CA_CERTS, the
 * operator's way to add a private CA.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { nodeArgsFor, ROOT } from '../../../bin/build-freshness.mjs';
import { freeLoopbackPort } from '../../../ops/net/free-loopback-port.js';
import { makeSelfSignedCertificate, opensslAvailable } from '../../support/self-signed-certificate.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, GATE_TOKEN, tableCatalogue } from './gate-fakes.js';

interface GateProcess {
  url: string;
  child: ChildProcess;
  /** What the process wrote so far. */
  output(): string;
}

/** Starts the gate's entry point on a free loopback port (see `fetchWhenReady` for when it answers). */
async function startGateProcess(platformUrl: string, extraEnv: Record<string, string>): Promise<GateProcess> {
  const port = await freeLoopbackPort();
  const child = spawn(process.execPath, nodeArgsFor('src/gate/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GATE_TOKEN,
      GATE_API_URL: platformUrl,
      GATE_PORT: String(port),
      GATE_HOST: '127.0.0.1',
      GATE_ORIGIN_TIMEOUT_MS: '5000',
      GATE_ALLOW_PRIVATE_ORIGINS: '1',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { url: `http://127.0.0.1:${port}`, child, output: () => output };
}

async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Asks `path` of the gate until it listens and has read its catalogue (it answers 503 before): up to 30 s. */
async function fetchWhenReady(gate: GateProcess, path: string): Promise<Response> {
  for (let i = 0; i < 300 && gate.child.exitCode === null; i++) {
    const res = await fetch(`${gate.url}${path}`).catch(() => undefined);
    if (res && res.status !== 503) return res;
    await res?.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the gate did not become ready:\n${gate.output()}`);
}

describe('gate: an HTTPS origin', function () {
  this.timeout(60_000);
  let dir: string;
  let certificate: { cert: string; key: string };
  let origin: https.Server;
  let originUrl: string;
  let platform: FakeServer;
  let facilitator: FakeServer;
  let gate: GateProcess | undefined;

  before(async function () {
    if (!opensslAvailable()) this.skip();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-gate-tls-'));
    certificate = makeSelfSignedCertificate(dir, 'origin.test');
    origin = https.createServer(
      { cert: fs.readFileSync(certificate.cert), key: fs.readFileSync(certificate.key) },
      (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ over: 'tls', url: req.url, host: req.headers.host }));
      },
    );
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originUrl = `https://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    ({ facilitator, platform } = await startFakes());
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(originUrl) });
  });

  afterEach(async () => {
    await stopProcess(gate?.child);
    gate = undefined;
  });

  after(async () => {
    if (!origin) return;
    origin.closeAllConnections();
    await new Promise((resolve) => origin.close(resolve));
    await Promise.all([facilitator.stop(), platform.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('forwards over TLS to an origin whose certificate it trusts', async () => {
    gate = await startGateProcess(platform.url, { NODE_EXTRA_CA_CERTS: certificate.cert });
    const res = await fetchWhenReady(gate, `/${GATE_SLUG}/free?q=1`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { over: 'tls', url: '/free?q=1', host: new URL(originUrl).host });
  });

  it('forwards nothing to an origin whose certificate it does not trust (502 gate_origin_unreachable)', async () => {
    gate = await startGateProcess(platform.url, {});
    const res = await fetchWhenReady(gate, `/${GATE_SLUG}/free`);
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as { error_code: string }).error_code, 'gate_origin_unreachable');
  });
});

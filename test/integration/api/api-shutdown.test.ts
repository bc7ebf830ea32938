/**
 * treasury-api as a real process (src/api/main.ts): on SIGTERM during an in-flight payment — held at the
 * signer by a slow socket proxy, with the background loops (ledger verifier, expired-reservation sweeper,
 * retired-key reconciler, rate-limit clean-up) running — the payment completes with its signature, every
 * closeable is closed in the documented order with one JSON log line each (name, duration, outcome), and
 * the process exits 0, each step within its own bound. And the pay path's crash hooks are no longer production
 * configuration: TREASURY_FAULT_INJECTION in the environment does nothing (only the test preload
 * test/support/pay-fault-preload.ts installs them; test/integration/api/pay-races.test.ts uses it).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

/** A unix-socket proxy in front of the signer that holds each request `delayMs` before passing it on. */
async function slowSignerProxy(
  target: string,
): Promise<{ socketPath: string; delayMs: number; forwarded: number; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsp-'));
  const socketPath = path.join(dir, 'proxy.sock');
  const sockets = new Set<net.Socket>();
  const proxy = {
    socketPath,
    delayMs: 0,
    forwarded: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      proxy.forwarded++;
      const delay = proxy.delayMs;
      if (delay === 0) upstream.write(chunk);
      else setTimeout(() => upstream.write(chunk), delay);
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return proxy;
}

/** The API's closeables in closing order (src/api/app.ts `closeables`, then src/api/main.ts). */
const API_SHUTDOWN_STEPS = [
  'http_stop_accepting',
  'http_drain',
  'ledger_verifier',
  'proof_rechecker',
  'rate_limit_cleanup',
  'retired_key_reconciler',
  'expired_reservation_sweeper',
  'payment_id_sweeper',
  'rejected_ledger_sweeper',
  'pay_connections',
  'signer_client',
  'database_pool',
  'embedded_database',
];

describe('treasury-api shutdown (a real process)', function () {
  this.timeout(120_000);
  let signer: TestSigner;
  let db: TestDatabase;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  const started: ApiProcess[] = [];

  before(async () => {
    signer = await startTestSigner();
    db = await createTestDatabase();
  });
  after(async () => {
    for (const api of started) await api.stop();
    await db?.drop();
    await signer?.stop();
  });

  async function walletOn(api: ApiProcess): Promise<{ token: string; walletId: string }> {
    const minted = await fetch(`${api.url}/v1/treasury`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ owner_type: 'agent', owner_id: `shutdown-${randomBytes(4).toString('hex')}` }),
    });
    assert.equal(minted.status, 201, await minted.clone().text());
    const token = ((await minted.json()) as { api_key: string }).api_key;
    const wallet = await fetch(`${api.url}/v1/wallets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    assert.ok(wallet.status < 300, await wallet.clone().text());
    return { token, walletId: ((await wallet.json()) as { id: string }).id };
  }

  const pay = (api: ApiProcess, token: string, walletId: string) =>
    fetch(`${api.url}/v1/wallets/${walletId}/pay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ payment_requirements: paymentRequirements({ amount: '10000', maxTimeoutSeconds: 120 }) }),
    });

  it('SIGTERM during an in-flight pay: the pay completes, every closeable closes in order within its own bound with a log line each, exit 0', async () => {
    const proxy = await slowSignerProxy(signer.socketPath);
    try {
      const api = await startApiProcess(
        db,
        signer,
        { TREASURY_ADMIN_TOKEN: admin },
        { logs: true, signerSocket: proxy.socketPath },
      );
      started.push(api);
      const { token, walletId } = await walletOn(api);
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        api.child.once('exit', (code, signal) => resolve({ code, signal })),
      );

      proxy.delayMs = 1_500;
      const before = proxy.forwarded;
      const paying = pay(api, token, walletId);
      while (proxy.forwarded === before) await sleep(5); // the pay's sign request is held at the proxy
      api.child.kill('SIGTERM');

      const res = await paying;
      const body = (await res.json()) as { signature?: string };
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.match(body.signature ?? '', /^0x[0-9a-f]{130}$/);
      // Bounded by the shutdown's own bounds, not a wall-clock budget: every step has a time-out, and exit 0
      // (below, every step `closed`) means none reached it; the drain ended with the pay, before its 10 s cut.
      // A shutdown that hung would end `timed_out` with exit 1, or fail this test by mocha's time-out.
      const exit = await exited;
      assert.deepEqual(exit, { code: 0, signal: null }, api.logs());

      const lines = api
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map(
          (l) =>
            JSON.parse(l) as {
              msg: string;
              time?: string;
              step?: string;
              outcome?: string;
              duration_ms?: number;
              reason?: string;
              position?: number;
              steps?: number;
            },
        );
      // In the order they were closed (`position`): a line can reach the captured output after a later one at exit.
      const steps = lines
        .filter((l) => l.msg === 'shutdown step')
        .sort((x, y) => (x.position ?? 0) - (y.position ?? 0));
      assert.deepEqual(
        steps.map((s) => [s.position, s.step]),
        API_SHUTDOWN_STEPS.map((name, i) => [i + 1, name]),
        api.logs(),
      );
      assert.ok(
        steps.every((s) => s.outcome === 'closed' && typeof s.duration_ms === 'number'),
        api.logs(),
      );
      const drain = steps.find((s) => s.step === 'http_drain')!.duration_ms!;
      assert.ok(drain >= 500, 'the drain waited for the pay in flight');
      assert.ok(drain < 10_000, `the drain ended with the pay, not when it cut the connections (${drain} ms)`);
      const at = (msg: string) => lines.findIndex((l) => l.msg === msg);
      assert.equal(lines[at('shutting down')]?.reason, 'SIGTERM');
      assert.ok(at('shutting down') < lines.indexOf(steps[0]!), api.logs());
      assert.equal(lines[at('stopped')]?.steps, API_SHUTDOWN_STEPS.length, api.logs());
    } finally {
      await proxy.close();
    }
  });

  it('TREASURY_FAULT_INJECTION is not configuration: a pay answers 200 and the process lives on', async () => {
    const api = await startApiProcess(db, signer, {
      TREASURY_ADMIN_TOKEN: admin,
      TREASURY_FAULT_INJECTION: 'kill_after_pay_commit',
    });
    started.push(api);
    const { token, walletId } = await walletOn(api);
    const res = await pay(api, token, walletId).catch((err: Error) => err);
    assert.ok(!(res instanceof Error), 'the response arrived');
    assert.equal(res.status, 200);
    await sleep(200);
    assert.equal(api.child.exitCode, null);
    assert.equal(api.child.signalCode, null);
  });
});

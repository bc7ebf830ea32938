/**
 * Production mode (src/api/config/production-mode.ts): the real treasury-api entry point, spawned with a
 * sound production environment minus one setting, refuses to start — exit 1 and one line naming that
 * setting — before it opens a database, a socket or a port. The control: the same sound environment passes
 * every check and fails only later, reaching for a database that is not there; with TLS files it starts and
 * serves HTTPS itself (and /metrics on its own plain-HTTP loopback listener, TREASURY_METRICS_PORT).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { operatorTokenWeakness } from '../../../src/api/config/production-mode.js';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';
import { makeSelfSignedCertificate, opensslAvailable } from '../../support/self-signed-certificate.js';
import { createTestDatabase, freePort } from '../../support/test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** A production environment that passes every check; its database is a closed port (never reached by a refusal). */
function soundProductionEnv(): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://treasury@127.0.0.1:9/treasury',
    TREASURY_BEHIND_TLS_PROXY: '1',
    TREASURY_PUBLIC_URL: 'https://treasury.example.com',
    TREASURY_ADMIN_TOKEN: randomBytes(32).toString('base64url'),
    TREASURY_SIGNER_SOCKET: '/nonexistent/signer.sock',
    TREASURY_PORT: '9',
    TREASURY_METRICS_PORT: '10',
  };
}

interface Exit {
  code: number | null;
  lines: string[];
}

/** Runs src/api/main.ts (compiled when dist/ is current, else under tsx; plus `nodeOptions`) with only `env` (and PATH/HOME) and collects its stderr lines. */
function runApi(env: Record<string, string | undefined>, nodeOptions: string[] = []): Promise<Exit> {
  const clean: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/' };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  const child = spawn(process.execPath, nodeArgsFor('src/api/main.ts', nodeOptions), {
    cwd: ROOT,
    env: clean,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, lines: output.split('\n').filter((l) => l.trim() !== '') });
    }),
  );
}

/** Asserts the process refused on `setting`: exit 1, one line, naming it. */
function assertRefused(exit: Exit, setting: string): void {
  assert.equal(exit.code, 1, `exit code; output:\n${exit.lines.join('\n')}`);
  assert.equal(exit.lines.length, 1, `one line expected:\n${exit.lines.join('\n')}`);
  const line = JSON.parse(exit.lines[0]!) as { msg: string; setting: string };
  assert.equal(line.setting, setting);
  assert.match(line.msg, /refuses to start in production mode/);
  assert.ok(line.msg.includes(setting), line.msg);
}

describe('production mode: treasury-api refuses unsafe settings (one line naming the setting, exit 1)', function () {
  this.timeout(60_000);

  it('control: a sound production environment passes every check (it fails later, on the missing database)', async () => {
    const exit = await runApi(soundProductionEnv());
    assert.equal(exit.code, 1);
    const text = exit.lines.join('\n');
    assert.doesNotMatch(text, /refuses to start/);
    assert.match(text, /treasury-api failed to start/);
  });

  it('DATABASE_URL unset (no embedded PostgreSQL in production)', async () => {
    assertRefused(await runApi({ ...soundProductionEnv(), DATABASE_URL: undefined }), 'DATABASE_URL');
  });

  it('TREASURY_ENV=production is production mode too', async () => {
    const env = { ...soundProductionEnv(), NODE_ENV: undefined, TREASURY_ENV: 'production', DATABASE_URL: undefined };
    assertRefused(await runApi(env), 'DATABASE_URL');
  });

  it('neither TLS files nor TREASURY_BEHIND_TLS_PROXY=1', async () => {
    assertRefused(
      await runApi({ ...soundProductionEnv(), TREASURY_BEHIND_TLS_PROXY: undefined }),
      'TREASURY_BEHIND_TLS_PROXY',
    );
  });

  it('a TLS certificate without its key', async () => {
    const env = { ...soundProductionEnv(), TREASURY_BEHIND_TLS_PROXY: undefined, TREASURY_TLS_CERT_FILE: '/x.pem' };
    assertRefused(await runApi(env), 'TREASURY_TLS_KEY_FILE');
  });

  it('a public URL that is not https', async () => {
    const env = { ...soundProductionEnv(), TREASURY_PUBLIC_URL: 'http://treasury.example.com' };
    assertRefused(await runApi(env), 'TREASURY_PUBLIC_URL');
  });

  it('TREASURY_TRUSTED_PROXIES covering public addresses (every client could write its own X-Forwarded-For)', async () => {
    for (const range of ['0.0.0.0/0', '::/0', '::ffff:0.0.0.0/96', '10.0.0.0/8, 0.0.0.0/1'])
      assertRefused(
        await runApi({ ...soundProductionEnv(), TREASURY_TRUSTED_PROXIES: range }),
        'TREASURY_TRUSTED_PROXIES',
      );
  });

  it('control: trusted proxies named by address, private ranges or public ranges of /8 (/16) or longer pass', async () => {
    for (const ranges of ['10.0.0.0/8', '172.16.0.0/12,127.0.0.1/32, ::1, fc00::/7, fe80::/10, 2400:cb00::/32']) {
      const exit = await runApi({ ...soundProductionEnv(), TREASURY_TRUSTED_PROXIES: ranges });
      assert.doesNotMatch(exit.lines.join('\n'), /refuses to start/, ranges);
      assert.match(exit.lines.join('\n'), /treasury-api failed to start/, ranges);
    }
  });

  it('plain http:// to another host for an upstream (facilitator, JSON-RPC): https, or http to loopback only', async () => {
    const refused: [string, string][] = [
      ['TREASURY_FACILITATOR_URL', 'http://facilitator.example.com'],
      ['TREASURY_FACILITATOR_URL', 'http://10.0.0.5:4022'],
      ['TREASURY_RPC_URLS', '{"eip155:84532":"http://127.0.0.1:8545","eip155:8453":"http://rpc.example.com"}'],
      ['TREASURY_SOLANA_RPC_URL', 'http://solana-rpc.example.com'],
    ];
    for (const [name, value] of refused) assertRefused(await runApi({ ...soundProductionEnv(), [name]: value }), name);
    const accepted = {
      TREASURY_FACILITATOR_URL: 'http://127.0.0.1:4022',
      TREASURY_RPC_URLS: '{"eip155:84532":"http://localhost:8545","eip155:8453":"https://rpc.example.com"}',
      TREASURY_SOLANA_RPC_URL: 'http://[::1]:8899',
    };
    const exit = await runApi({ ...soundProductionEnv(), ...accepted });
    assert.doesNotMatch(exit.lines.join('\n'), /refuses to start/);
    assert.match(exit.lines.join('\n'), /treasury-api failed to start/);
  });

  it('no metrics listener: /metrics on the API listener unless TREASURY_METRICS_ON_PUBLIC_LISTENER=1 says so', async () => {
    assertRefused(await runApi({ ...soundProductionEnv(), TREASURY_METRICS_PORT: undefined }), 'TREASURY_METRICS_PORT');
    assertRefused(
      await runApi({
        ...soundProductionEnv(),
        TREASURY_METRICS_PORT: undefined,
        TREASURY_METRICS_ON_PUBLIC_LISTENER: '0',
      }),
      'TREASURY_METRICS_PORT',
    );
    const optedOut = await runApi({
      ...soundProductionEnv(),
      TREASURY_METRICS_PORT: undefined,
      TREASURY_METRICS_ON_PUBLIC_LISTENER: '1',
    });
    assert.doesNotMatch(optedOut.lines.join('\n'), /refuses to start/);
    assert.match(optedOut.lines.join('\n'), /treasury-api failed to start/);
    assert.doesNotMatch(optedOut.lines.join('\n'), /TREASURY_METRICS/);
    // Both at once say opposite things: the configuration is refused, naming the opt-out.
    const both = await runApi({ ...soundProductionEnv(), TREASURY_METRICS_ON_PUBLIC_LISTENER: '1' });
    assert.equal(both.code, 1);
    assert.match(both.lines.join('\n'), /TREASURY_METRICS_ON_PUBLIC_LISTENER: is 1 while TREASURY_METRICS_PORT/);
  });

  it('TREASURY_VERIFY_ALLOW_PRIVATE=1 (sandbox only)', async () => {
    const env = { ...soundProductionEnv(), TREASURY_VERIFY_ALLOW_PRIVATE: '1' };
    assertRefused(await runApi(env), 'TREASURY_VERIFY_ALLOW_PRIVATE');
  });

  it('a sandbox faucet (sandbox only)', async () => {
    const env = { ...soundProductionEnv(), TREASURY_SANDBOX_FAUCET_URL: 'http://127.0.0.1:8547' };
    assertRefused(await runApi(env), 'TREASURY_SANDBOX_FAUCET_URL');
  });

  it('XX_ALLOW_LOCAL_ONLY=1 (sandbox only)', async () => {
    assertRefused(await runApi({ ...soundProductionEnv(), XX_ALLOW_LOCAL_ONLY: '1' }), 'XX_ALLOW_LOCAL_ONLY');
  });

  it('TREASURY_RATE_LIMITS=off (benchmarks only)', async () => {
    assertRefused(await runApi({ ...soundProductionEnv(), TREASURY_RATE_LIMITS: 'off' }), 'TREASURY_RATE_LIMITS');
  });

  it('pay fault injection through the test preload', async () => {
    const env = { ...soundProductionEnv(), TREASURY_TEST_PAY_FAULT: 'kill_after_pay_commit' };
    const preload = ['--import', path.join(ROOT, 'test/support/pay-fault-preload.ts')];
    const exit = await runApi(env, preload);
    // The preload announces itself before main runs; the refusal is the one line after it.
    assert.match(exit.lines[0] ?? '', /test fault injection active/);
    assertRefused({ code: exit.code, lines: exit.lines.slice(1) }, 'TREASURY_TEST_PAY_FAULT');
  });

  it('a test preload without a fault set', async () => {
    const preload = ['--import', path.join(ROOT, 'test/support/pay-fault-preload.ts')];
    assertRefused(await runApi(soundProductionEnv(), preload), 'NODE_OPTIONS');
  });

  it('a weak operator token: short, a placeholder, or too few distinct characters', async () => {
    for (const token of ['a'.repeat(24) + 'bcdefgh', 'ab'.repeat(20), `changeme-${randomBytes(24).toString('hex')}`])
      assertRefused(await runApi({ ...soundProductionEnv(), TREASURY_ADMIN_TOKEN: token }), 'TREASURY_ADMIN_TOKEN');
  });

  it('with TREASURY_TLS_CERT_FILE and _KEY_FILE it starts in production mode and serves HTTPS itself', async function () {
    if (!opensslAvailable()) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-tls-'));
    const certificate = makeSelfSignedCertificate(dir, 'localhost');
    const db = await createTestDatabase();
    const port = await freePort();
    const metricsPort = await freePort();
    const child = spawn(process.execPath, nodeArgsFor('src/api/main.ts'), {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        ...soundProductionEnv(),
        DATABASE_URL: db.connectionString,
        TREASURY_BEHIND_TLS_PROXY: '0',
        TREASURY_TLS_CERT_FILE: certificate.cert,
        TREASURY_TLS_KEY_FILE: certificate.key,
        TREASURY_PORT: String(port),
        TREASURY_METRICS_PORT: String(metricsPort),
        TREASURY_SIGNER_SOCKET: path.join(dir, 'absent.sock'),
        TREASURY_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    try {
      const ca = fs.readFileSync(certificate.cert);
      const get = (p: string) =>
        new Promise<number>((resolve, reject) =>
          https
            .get({ host: '127.0.0.1', port, path: p, ca }, (res) => resolve(res.statusCode ?? 0))
            .on('error', reject),
        );
      let status = 0;
      for (let i = 0; i < 300 && status === 0 && child.exitCode === null; i++) {
        status = await get('/livez').catch(() => 0);
        if (status === 0) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200, output);
      assert.match(output, /"url":"https:\/\/127\.0\.0\.1:\d+"/);
      assert.match(output, /"production":true/);
      // Plain HTTP on the same port is not served.
      const plain = await fetch(`http://127.0.0.1:${port}/livez`).then(
        (r) => r.status,
        () => 0,
      );
      assert.notEqual(plain, 200);
      // /metrics only on the metrics listener (plain HTTP, loopback), not on the public HTTPS port.
      assert.equal(await get('/metrics'), 404);
      assert.equal((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status, 200);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      await db.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('operator token strength: random tokens pass, typed ones do not', () => {
    assert.equal(operatorTokenWeakness(randomBytes(32).toString('base64')), undefined);
    assert.equal(operatorTokenWeakness(randomBytes(32).toString('hex')), undefined);
    assert.ok(operatorTokenWeakness('01234567'.repeat(5)));
    assert.ok(operatorTokenWeakness('x'.repeat(64)));
  });
});

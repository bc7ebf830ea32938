/**
 * `xx buy --method` and `--body` (inline JSON and `@file`) reach the seller as given, through the real `xx`
 * binary with an agent PAT against the real API; a body that is not JSON, an unreadable `@file` and a method
 * outside the list exit 2 naming the flag, and nothing is sent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { runXx, stderrJson, stdoutJson } from './xx-process.js';

describe('xx buy --method and --body (real binary, real API, a loopback echo seller)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let pat: string;
  let echo: http.Server;
  let echoUrl: string;
  const seen: Array<{ method: string; type: string | undefined; body: string }> = [];

  before(async () => {
    t = await startTestTreasury();
    const { session, agent_id } = await signInWithNewKey(t);
    const wallet = await t.request('POST', `/v1/agents/${agent_id}/wallets`, { token: session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
    echo = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, type: req.headers['content-type'], body });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, body }));
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/echo`;
  });
  after(async () => {
    echo?.close();
    await t?.stop();
  });

  const env = () => ({ HOME: fileTempDir('xx-buy-body-'), XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' });

  it('sends the method and an inline JSON body, then one read from @file', async () => {
    const inline = stdoutJson(
      await runXx(['buy', echoUrl, '--method', 'post', '--body', '{"q":"ünïcode"}', '--max', '0.01', '--json'], env()),
      'buy --body inline',
    );
    assert.equal(inline.status, 200);
    assert.equal(inline.paid, false);
    assert.deepEqual(seen.at(-1), { method: 'POST', type: 'application/json', body: '{"q":"ünïcode"}' });

    const dir = fileTempDir('xx-buy-file-');
    const file = path.join(dir, 'body.json');
    fs.writeFileSync(file, '{\n  "items": [1, 2, 3]\n}\n');
    const fromFile = stdoutJson(
      await runXx(['buy', echoUrl, '--method', 'PUT', '--body', `@${file}`, '--max', '0.01', '--json'], env()),
      'buy --body @file',
    );
    assert.equal(fromFile.status, 200);
    assert.deepEqual(seen.at(-1), { method: 'PUT', type: 'application/json', body: '{\n  "items": [1, 2, 3]\n}\n' });
  });

  it('refuses a body that is not JSON, a missing @file and an unknown method with exit 2, sending nothing', async () => {
    const before = seen.length;
    for (const [args, flag] of [
      [['--body', 'not json'], '--body'],
      [['--body', '@/nonexistent/body.json'], '--body'],
      [['--method', 'TRACE'], '--method'],
    ] as const) {
      const run = await runXx(['buy', echoUrl, ...args, '--max', '0.01', '--json'], env());
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(stderrJson(run, args.join(' ')).user_message, new RegExp(flag));
    }
    assert.equal(seen.length, before, 'nothing reached the seller');
  });
});

/**
 * How the sandbox's demos keep what they registered (ops/sandbox/demo-state-file.ts): the first start registers
 * and writes the state file 0600; a later start reuses it while it is still good, and registers anew (rewriting
 * the file) when it is not — a reset database, another pay-to key. And the bearer check it relies on.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { bearerAccepted, reuseOrRegister } from '../../../ops/sandbox/demo-state-file.js';

describe('sandbox demo state file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-state-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('registers on the first start, writes the file 0600, and reuses it while it is still good', async () => {
    const file = path.join(dir, 'demo.json');
    let registrations = 0;
    const register = async () => ({ pat: `pat-${++registrations}` });
    const first = await reuseOrRegister(file, async () => true, register);
    assert.deepEqual(first, { state: { pat: 'pat-1' }, registered: true });
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { pat: 'pat-1' });

    const seen: unknown[] = [];
    const second = await reuseOrRegister(
      file,
      async (stored) => {
        seen.push(stored);
        return true;
      },
      register,
    );
    assert.deepEqual(second, { state: { pat: 'pat-1' }, registered: false });
    assert.deepEqual(seen, [{ pat: 'pat-1' }]);
    assert.equal(registrations, 1);
  });

  it('registers anew and rewrites the file when the stored registration is no longer good', async () => {
    const file = path.join(dir, 'demo.json');
    fs.writeFileSync(file, JSON.stringify({ pat: 'stale' }), { mode: 0o644 });
    const again = await reuseOrRegister(
      file,
      async () => false,
      async () => ({ pat: 'fresh' }),
    );
    assert.deepEqual(again, { state: { pat: 'fresh' }, registered: true });
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { pat: 'fresh' });
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  it('bearerAccepted: true on a 2xx to the bearer sent, false on a refusal or when nothing answers', async () => {
    const requests: { method?: string; authorization?: string }[] = [];
    const server = http.createServer((req, res) => {
      requests.push({ method: req.method, authorization: req.headers.authorization });
      res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : 401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/auth/verify`;
    try {
      assert.equal(await bearerAccepted(url, 'good', { method: 'POST' }), true);
      assert.equal(await bearerAccepted(url, 'bad'), false);
      assert.deepEqual(requests, [
        { method: 'POST', authorization: 'Bearer good' },
        { method: 'GET', authorization: 'Bearer bad' },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal(await bearerAccepted(url, 'good'), false);
  });
});

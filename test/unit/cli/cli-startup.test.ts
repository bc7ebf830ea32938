/**
 * What keeps `xx whoami` starting fast, checked by what it loads rather than by a clock (the times are
 * `npm run bench:cli`'s, docs/performance.md): the CLI's HTTP client speaks node:http, so a run never loads
 * Node's bundled undici (the global fetch's, about 150 ms of CPU at a process's first fetch). And what the
 * client does instead of fetch still holds: a reply cut short and a server that never answers are each a
 * `network_error` naming the server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ApiClient } from '../../../src/cli/core/api-client.js';
import { CliError } from '../../../src/cli/core/cli-error.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function serve(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** Prints, as the process exits, the internal modules it loaded whose name says undici. */
const REPORT_UNDICI = `data:text/javascript,process.on('exit', () => process.stderr.write('UNDICI ' + JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))) + '\\n'))`;

describe('xx start-up: what whoami loads, and the HTTP client that replaced fetch', function () {
  this.timeout(60_000);

  it('xx whoami answers through the real binary without loading undici (the global fetch)', async () => {
    // whoami, then the agent's wallets (whoami lists them with whether their policy is owner-signed).
    const wallet = { id: 'wal_start', address: `0x${'ab'.repeat(20)}`, chain: 'base', network: 'eip155:84532' };
    const replies: Record<string, unknown> = {
      '/v1/auth/whoami': { auth_type: 'pat', scope_type: 'agent', scope_id: 'ag_start', token_id: 'pat_start' },
      '/v1/agents/ag_start': {
        agent_id: 'ag_start',
        label: null,
        wallets: [{ ...wallet, label: null, policy_state: 'owner_signed' }],
        wallets_next_cursor: null,
      },
    };
    const api = await serve((req, res) => {
      const reply =
        req.headers.authorization === `Bearer xx_pat_${'s'.repeat(24)}` ? replies[req.url ?? ''] : undefined;
      res.writeHead(reply ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply ?? { error_code: 'not_found', user_message: 'Not found.' }));
    });
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xx-startup-'));
    try {
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', REPORT_UNDICI, 'bin/xx.mjs', '--json', 'whoami'], {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            HOME: home,
            XX_USE_SOURCES: '1',
            XX_PAT: `xx_pat_${'s'.repeat(24)}`,
            XX_API_URL: api.url,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), {
        auth_type: 'pat',
        scope_type: 'agent',
        scope_id: 'ag_start',
        wallets: [{ id: wallet.id, address: wallet.address, policy_state: 'owner_signed' }],
        source: 'XX_PAT',
        server: api.url,
      });
      const report = /^UNDICI (.*)$/m.exec(run.stderr);
      assert.ok(report, `no module report on stderr: ${run.stderr}`);
      assert.deepEqual(JSON.parse(report[1]!), [], 'xx whoami loaded undici');
    } finally {
      await api.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('ApiClient: a reply cut short and a server that never answers are network_error naming the server', async () => {
    const api = await serve((req, res) => {
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"half":');
        setTimeout(() => res.destroy(), 20);
      }
      // '/silent': never answered
    });
    try {
      const client = new ApiClient({ baseUrl: api.url, token: 'xx_pat_abc', timeoutMs: 300 });
      for (const where of ['/cut', '/silent'])
        await assert.rejects(
          client.request('GET', where),
          (e: unknown) => e instanceof CliError && e.code === 'network_error' && e.userMessage.includes(api.url),
          where,
        );
    } finally {
      await api.close();
    }
  });
});

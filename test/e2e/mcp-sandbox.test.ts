/**
 * `xx mcp` and headless credentials against the `npm start` sandbox (PostgreSQL, SoftHSM signer, API, anvil,
 * the official-package facilitator, the demo seller), driven by the MCP SDK's own client:
 * - stdio (StdioClientTransport spawning bin/xx.mjs with only XX_PAT, XX_API_URL and XX_MCP_ALLOW_PRIVATE_TARGETS,
 *   the sandbox's sellers being on loopback): the six tools listed,
 *   a balance read, the demo seller paid within budget, a budget refusal carrying `raise_max_amount`, the
 *   policy dry run and the payment history; the PAT appears in no answer;
 * - Streamable HTTP (`xx mcp --http 127.0.0.1:0`) with a PAT capped at 0.015 USD a day, the client sending the
 *   bearer the --json line gave: one payment, then the cap refusal carrying the API's `raise_pat_cap` block;
 *   a foreign Host header is 403, a request without the bearer 401; a non-loopback address is refused
 *   without --allow-remote;
 * - no bearer: `missing_bearer`, exit 1, one JSON object on stderr under --json;
 * - a fresh home with only XX_PAT: `xx buy <demo seller> --max 0.05` pays, and `xx history` shows it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freshCliHome, sandboxCliEnv, startSandbox, type RunningSandbox } from '../support/sandbox-harness.js';
import { ROOT, runXx, stderrJson, stdoutJson, XX_BIN } from '../integration/cli/xx-process.js';

const freshHome = freshCliHome;

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as ToolAnswer;
}

const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

describe('xx mcp and headless credentials against the npm start sandbox (MCP SDK client, real chain)', function () {
  this.timeout(400_000);
  let sandbox: RunningSandbox;
  let ownerEnv: Record<string, string>;
  let agentPat: string;
  let agentId: string;
  const answers: string[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    sandbox = await startSandbox();
    ownerEnv = sandboxCliEnv(sandbox, 'mcp-owner');
    const init = stdoutJson(
      await runXx(['init', '--server', sandbox.info.api_url, '--label', 'mcp', '--json'], ownerEnv),
      'init',
    );
    agentId = init.agent_id;
    agentPat = JSON.parse(fs.readFileSync(path.join(ownerEnv.XX_HOME!, 'agents', `${agentId}.json`), 'utf8')).pat;
    assert.equal(
      stdoutJson(await runXx(['fund', '--testnet', '--amount', '1', '--json'], ownerEnv), 'fund').funded,
      true,
    );
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await sandbox?.stop();
  });

  /** Only XX_PAT (and the server's URL): no init state, no profile. The sandbox's sellers are on loopback. */
  const headless = (pat: string) => ({
    HOME: freshHome('mcp-headless'),
    XX_PAT: pat,
    XX_API_URL: sandbox.info.api_url,
    XX_MCP_ALLOW_PRIVATE_TARGETS: '1',
    NO_COLOR: '1',
  });

  it('missing_bearer: exit 1 at start, one JSON object on stderr under --json', async () => {
    const run = await runXx(['mcp', '--json'], { HOME: freshHome('mcp-nobody'), XX_API_URL: sandbox.info.api_url });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '', 'nothing on the protocol channel');
    const e = stderrJson(run, 'xx mcp without a bearer');
    assert.equal(e.error_code, 'missing_bearer');
    assert.equal(e.recovery.kind, 'reauthenticate');
    const text = await runXx(['mcp'], { HOME: freshHome('mcp-nobody') });
    assert.equal(text.code, 1);
    assert.match(text.stderr, /missing_bearer/);
  });

  it('a fresh home with only XX_PAT: xx buy <demo seller> --max 0.05 pays; whoami and history use the same PAT', async () => {
    const env = headless(agentPat);
    const who = stdoutJson(await runXx(['whoami', '--json'], env), 'whoami');
    assert.deepEqual([who.scope_type, who.scope_id, who.source], ['agent', agentId, 'XX_PAT']);
    const bought = stdoutJson(
      await runXx(['buy', sandbox.info.demo_seller_url, '--max', '0.05', '--json'], env),
      'buy',
    );
    assert.equal(bought.status, 200);
    assert.equal(bought.paid, true);
    assert.match(bought.receipt.txHash, /^0x[0-9a-f]{64}$/);
    assert.equal(bought.receipt.amount, '0.01');
    const history = stdoutJson(await runXx(['history', '--json'], env), 'history');
    assert.equal(history.payments[0].amount_usd, '0.01');
    assert.equal(history.payments[0].resource, sandbox.info.demo_seller_url);
    assert.ok(['signed', 'settled'].includes(history.payments[0].status), history.payments[0].status);
    const wallets = stdoutJson(await runXx(['agent', 'wallets', 'list', '--json'], env), 'agent wallets list');
    assert.equal(wallets.agent_id, agentId);
    assert.equal(wallets.wallets.length, 1);
  });

  it('stdio: tools listed, balance read, the demo seller paid within budget, a budget refusal with raise_max_amount', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp'],
      cwd: ROOT,
      env: headless(agentPat),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-test', version: '0' });
    await client.connect(transport);
    try {
      // The version the server announces is the package's, from the build as from the sources.
      assert.equal(client.getServerVersion()?.version, PACKAGE_VERSION);
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [
        'check_policy',
        'discover',
        'get_balance',
        'list_wallets',
        'pay',
        'payment_history',
      ]);
      for (const tool of tools) {
        assert.ok(tool.description && !tool.description.includes('\n'), `${tool.name}: a one-line description`);
        assert.equal(tool.inputSchema.type, 'object');
      }

      const wallets = await call(client, 'list_wallets');
      assert.equal(wallets.isError, undefined, JSON.stringify(wallets));
      const wallet = wallets.structuredContent!.wallets[0];
      assert.match(wallet.id, /^wal_/);
      assert.equal(wallet.status, 'active');
      assert.equal(wallet.policy.per_tx_cap_usd, '1');

      const before = await call(client, 'get_balance', {});
      assert.equal(before.isError, undefined, JSON.stringify(before));
      assert.equal(before.structuredContent!.wallet_id, wallet.id);
      assert.equal(before.structuredContent!.stale, false);
      const balanceBefore = Number(before.structuredContent!.balance_usd);
      assert.ok(balanceBefore >= 0.98, `funded: ${balanceBefore}`);

      const paid = await call(client, 'pay', { url: sandbox.info.demo_seller_url, max_usd: '0.05' });
      assert.equal(paid.isError, undefined, JSON.stringify(paid));
      assert.equal(paid.structuredContent!.status, 200);
      assert.equal(paid.structuredContent!.paid, true);
      assert.equal(paid.structuredContent!.amount_usd, '0.01');
      assert.match(paid.structuredContent!.tx_hash, /^0x[0-9a-f]{64}$/);
      assert.match(paid.structuredContent!.seller_response.content_type, /json/);
      assert.equal(paid.structuredContent!.seller_response.body_truncated, false);
      assert.equal(paid.structuredContent!.seller_response.trust, 'untrusted');
      const after = await call(client, 'get_balance', { wallet_id: wallet.id });
      assert.equal(
        Math.round((balanceBefore - Number(after.structuredContent!.balance_usd)) * 1e6),
        10_000,
        'the balance moved by exactly the price',
      );

      const tooDear = await call(client, 'pay', { url: sandbox.info.demo_seller_url, max_usd: '0.001' });
      assert.equal(tooDear.isError, true);
      assert.equal(tooDear.structuredContent!.error_code, 'InsufficientBudgetError');
      assert.deepEqual(tooDear.structuredContent!.recovery, {
        kind: 'raise_max_amount',
        required_amount_usd: '0.01',
        current_max_amount_usd: '0.001',
      });
      assert.match(tooDear.content[0]!.text!, /Next step: .*max_usd/);

      const badInput = await call(client, 'pay', { url: 'ftp://x', max_usd: 'lots' });
      assert.equal(badInput.isError, true, 'zod refuses the input');

      const policy = await call(client, 'check_policy', {
        to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
        amount_usd: '5',
      });
      assert.equal(policy.isError, undefined, JSON.stringify(policy));
      assert.equal(policy.structuredContent!.allowed, false);
      assert.ok(
        policy.structuredContent!.refusing_rules.some((v: { rule?: string }) => /per_tx/.test(String(v.rule))),
        JSON.stringify(policy.structuredContent),
      );

      const history = await call(client, 'payment_history', { limit: 5 });
      assert.equal(history.isError, undefined, JSON.stringify(history));
      assert.ok(history.structuredContent!.payments.length >= 2, 'the CLI payment and this one');
      assert.equal(history.structuredContent!.payments[0].amount_usd, '0.01');

      for (const a of [wallets, before, paid, after, tooDear, policy, history]) answers.push(JSON.stringify(a));
    } finally {
      await client.close();
    }
  });

  it('Streamable HTTP on loopback, with the launch bearer: a PAT-cap refusal carries raise_pat_cap; a foreign Host is 403, no bearer 401', async () => {
    // A second agent PAT with a daily cap of 0.015 USD: one 0.01 payment fits, the second does not.
    const capped = stdoutJson(
      await runXx(['pat', 'create', '--label', 'mcp-capped', '--daily-cap', '0.015', '--json'], ownerEnv),
      'pat create',
    );
    const refused = await runXx(['mcp', '--http', '0.0.0.0:0', '--json'], headless(capped.pat));
    assert.equal(refused.code, 2);
    assert.equal(stderrJson(refused, 'mcp --http 0.0.0.0').error_code, 'non_loopback_refused');

    const child = spawn(process.execPath, [XX_BIN, 'mcp', '--http', '127.0.0.1:0', '--json'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...headless(capped.pat) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const { url, bearer } = await new Promise<{ url: string; bearer: string }>((resolve, reject) => {
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        const line = out.split('\n')[0];
        if (out.includes('\n')) resolve(JSON.parse(line!) as { url: string; bearer: string });
      });
      child.once('exit', (code) => reject(new Error(`xx mcp --http exited ${code}: ${stderr}`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

    assert.match(bearer, /^[A-Za-z0-9_-]{43}$/, 'this launch’s bearer, for the user who started it');
    assert.ok(!stderr.includes(bearer), 'the bearer is printed once, on the --json line');

    // DNS rebinding: a request naming another host is refused before it is read; another local process
    // without the bearer is refused too (test/integration/cli/mcp-http-bearer.test.ts has the cases).
    const port = Number(new URL(url).port);
    const statusOf = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end('{}');
      });
    assert.equal(await statusOf({ host: `evil.example:${port}`, authorization: `Bearer ${bearer}` }), 403);
    assert.equal(await statusOf({}), 401);

    const client = new Client({ name: 'treasury-test-http', version: '0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
    });
    await client.connect(transport);
    try {
      assert.equal((await client.listTools()).tools.length, 6, 'the same six tools as over stdio');
      const first = await call(client, 'pay', { url: sandbox.info.demo_seller_url, max_usd: '0.05' });
      assert.equal(first.isError, undefined, JSON.stringify(first));
      assert.equal(first.structuredContent!.paid, true);
      const second = await call(client, 'pay', { url: sandbox.info.demo_seller_url, max_usd: '0.05' });
      assert.equal(second.isError, true, JSON.stringify(second));
      assert.equal(second.structuredContent!.error_code, 'MGMT_6014');
      assert.equal(second.structuredContent!.status, 429);
      const r = second.structuredContent!.recovery;
      assert.equal(r.kind, 'raise_pat_cap');
      assert.equal(r.current_cap_usd, '0.015');
      assert.equal(r.attempted_amount_usd, '0.01');
      assert.ok(String(r.settings_url).endsWith(`/settings/pats/${capped.id}`), r.settings_url);
      assert.match(second.content[0]!.text!, /Next step: .*daily spending cap/);
      answers.push(JSON.stringify(first), JSON.stringify(second));
      await transport.terminateSession();
    } finally {
      await client.close();
    }
    assert.ok(!answers.some((a) => a.includes(agentPat) || a.includes(capped.pat)), 'no PAT in any tool answer');
    assert.ok(!answers.some((a) => a.includes(bearer)), 'nor the HTTP bearer');
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  });
});

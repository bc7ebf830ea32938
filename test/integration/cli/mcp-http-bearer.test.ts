/**
 * `xx mcp --http` asks every request for the launch's bearer (src/cli/commands/mcp/mcp-http-bearer.ts), so
 * another local user or process reaching the loopback port cannot spend with the PAT:
 * - the server itself (startMcpHttp with the real Treasury MCP server, its PAT pointing at an API nobody
 *   answers — listing tools needs none): no bearer, a wrong one of the same or another length, another
 *   scheme → 401 with `WWW-Authenticate: Bearer` and a JSON-RPC error, no session made (no McpServer built,
 *   no session ID returned), answered before the body is even sent; a session ID is no credential without
 *   the bearer; the Host check still comes first; with the bearer the official MCP SDK client initializes
 *   and lists the six tools;
 * - the real `xx` binary: the token it made is shown once to whoever started it (`bearer` in the --json
 *   line; on stderr with a client config otherwise) and works; XX_MCP_HTTP_TOKEN is honoured and never
 *   printed; one too short or with a space is refused with `invalid_argument` (exit 2) naming the variable.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMcpHttp, type RunningMcpHttp } from '../../../src/cli/commands/mcp/mcp-http-server.js';
import { parseListenAddress } from '../../../src/cli/commands/mcp/mcp-listen-address.js';
import { createToolContext } from '../../../src/cli/commands/mcp/tool-context.js';
import { buildTreasuryMcpServer } from '../../../src/cli/commands/mcp/treasury-mcp-server.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { ROOT, stderrJson, XX_BIN } from './xx-process.js';

const PAT = `xx_pat_${'a'.repeat(24)}`;
/** An API address nothing answers: no test here reaches Treasury. */
const NO_API = 'http://127.0.0.1:9';
const TOOLS = ['check_policy', 'discover', 'get_balance', 'list_wallets', 'pay', 'payment_history'];
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
});

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * One request as any local process could send it: headers as given, `body` sent whole — or, with `hold`, only
 * the headers, declaring a body that never comes.
 */
function raw(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; hold?: { contentLength: number } },
): Promise<RawAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: opts.method ?? 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(opts.hold ? { 'content-length': String(opts.hold.contentLength) } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          if (opts.hold) req.destroy();
        });
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    if (opts.hold) req.flushHeaders();
    else req.end(opts.body ?? INITIALIZE);
  });
}

function assertRefused(answer: RawAnswer, what: string): void {
  assert.equal(answer.status, 401, `${what}: ${answer.status} ${answer.body}`);
  assert.match(String(answer.headers['www-authenticate']), /^Bearer\b/, what);
  assert.equal(answer.headers['mcp-session-id'], undefined, `${what}: no session`);
  const body = JSON.parse(answer.body) as { jsonrpc: string; error: { code: number; message: string }; id: null };
  assert.equal(body.jsonrpc, '2.0', what);
  assert.equal(typeof body.error.message, 'string', what);
  assert.equal(body.id, null, what);
}

/** The official SDK client, sending `headers` with every request; resolves once it has initialized. */
async function sdkClient(url: string, headers: Record<string, string>) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'mcp-http-bearer-test', version: '0' });
  await client.connect(transport);
  return { client, transport };
}

describe('xx mcp --http: every request carries the launch bearer (real server, MCP SDK client)', function () {
  this.timeout(60_000);
  const TOKEN = 'the-launch-bearer_0123456789abcdefghijklmnop';
  let running: RunningMcpHttp;
  let built = 0;

  before(async () => {
    const tools = createToolContext(
      { token: PAT, server: NO_API, source: { kind: 'env', variable: 'XX_PAT' }, agent: undefined },
      { allowPrivateTargets: false },
    );
    running = await startMcpHttp(parseListenAddress('127.0.0.1:0', false), TOKEN, () => {
      built++;
      return buildTreasuryMcpServer(tools);
    });
  });
  after(() => running?.close());

  it('no bearer, a wrong one (same length, other lengths), another scheme: 401, and no session is made', async () => {
    const wrongSameLength = `${TOKEN.slice(0, -1)}${TOKEN.endsWith('x') ? 'y' : 'x'}`;
    assert.equal(wrongSameLength.length, TOKEN.length);
    const cases: Array<[string, Record<string, string>]> = [
      ['no Authorization', {}],
      ['a wrong bearer of the same length', { authorization: `Bearer ${wrongSameLength}` }],
      ['a prefix of the bearer', { authorization: `Bearer ${TOKEN.slice(0, 16)}` }],
      ['the bearer and more', { authorization: `Bearer ${TOKEN}x` }],
      ['an empty bearer', { authorization: 'Bearer ' }],
      ['the token under another scheme', { authorization: `Basic ${TOKEN}` }],
      ['the token without a scheme', { authorization: TOKEN }],
      ['the PAT the server holds', { authorization: `Bearer ${PAT}` }],
    ];
    for (const [what, headers] of cases) {
      const answer = await raw(running.url, { headers });
      assertRefused(answer, what);
      assert.ok(!answer.body.includes(TOKEN.slice(0, 16)), `${what}: the answer does not echo the token`);
    }
    // Not for the other methods or paths either (the endpoint is not even confirmed).
    assertRefused(await raw(running.url, { method: 'GET', body: '' }), 'GET');
    assertRefused(await raw(running.url, { method: 'DELETE', body: '' }), 'DELETE');
    assertRefused(await raw(running.url.replace(/\/mcp$/, '/elsewhere'), {}), 'another path');
    assert.equal(built, 0, 'no McpServer was built: no session exists');

    // The SDK client without the header fails to initialize, with the status.
    const transport = new StreamableHTTPClientTransport(new URL(running.url));
    const client = new Client({ name: 'no-bearer', version: '0' });
    await assert.rejects(client.connect(transport), (err: { code?: number }) => err.code === 401);
    await client.close();
    assert.equal(built, 0);
  });

  it('refuses before the body is read: a declared 2 MiB body that never comes is answered 401 at once', async () => {
    const answer = await raw(running.url, { hold: { contentLength: 2 * 1024 * 1024 } });
    assertRefused(answer, 'a body still on its way');
    assert.equal(answer.headers.connection, 'close', 'the unread body is dropped with the connection');
    assert.equal(built, 0);
  });

  it('the Host check still comes first: a foreign Host is 403, bearer or not', async () => {
    const port = new URL(running.url).port;
    for (const authorization of [undefined, `Bearer ${TOKEN}`]) {
      const answer = await raw(running.url, {
        headers: { host: `evil.example:${port}`, ...(authorization ? { authorization } : {}) },
      });
      assert.equal(answer.status, 403, answer.body);
    }
    const origin = await raw(running.url, {
      headers: { origin: 'http://evil.example', authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(origin.status, 403, origin.body);
  });

  it('with the bearer: initialize works and the tools are listed; a session ID without the bearer is refused', async () => {
    const { client, transport } = await sdkClient(running.url, { Authorization: `Bearer ${TOKEN}` });
    try {
      assert.equal(built, 1, 'one session, one McpServer');
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), TOOLS);
      // The scheme is case-insensitive (RFC 9110).
      assert.equal((await raw(running.url, { headers: { authorization: `bearer ${TOKEN}` } })).status, 200);
      assert.equal(built, 2);

      // Someone who learnt the session ID (it is no secret: logs, proxies) but not the bearer gets nothing.
      const sid = transport.sessionId!;
      assert.match(sid, /^[0-9a-f-]{36}$/);
      const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      const withSession = (authorization?: string) => ({
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-06-18',
        ...(authorization ? { authorization } : {}),
      });
      assertRefused(await raw(running.url, { headers: withSession(), body: list }), 'session, no bearer');
      assertRefused(
        await raw(running.url, { headers: withSession(`Bearer ${TOKEN.slice(1)}`), body: list }),
        'session, wrong bearer',
      );
      assertRefused(await raw(running.url, { method: 'DELETE', headers: withSession(), body: '' }), 'DELETE');
      assert.equal((await client.listTools()).tools.length, 6, 'the session was not ended by the refused DELETE');
      await transport.terminateSession();
    } finally {
      await client.close();
    }
  });
});

describe('xx mcp --http: the bearer as the user who started it sees it (bin/xx.mjs)', function () {
  this.timeout(120_000);
  const children: ChildProcess[] = [];
  after(async () => {
    for (const child of children)
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
  });

  const env = (extra: Record<string, string> = {}) => ({
    HOME: fileTempDir('xx-mcp-http-bearer-'),
    XX_PAT: PAT,
    XX_API_URL: NO_API,
    NO_COLOR: '1',
    ...extra,
  });

  /** `xx mcp --http 127.0.0.1:0 …` (stopped in `after`) and what it prints, as it prints it. */
  function launch(args: string[], vars: Record<string, string>) {
    const child = spawn(process.execPath, [XX_BIN, 'mcp', '--http', '127.0.0.1:0', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...vars },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
    return { child, out };
  }

  /** Resolves with what the server printed once `until` shows on `stream` (fails if it exits or is silent for 60 s). */
  function serve(args: string[], vars: Record<string, string>, stream: 'stdout' | 'stderr', until: RegExp) {
    const { child, out } = launch(args, vars);
    return new Promise<typeof out>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`xx mcp --http printed no ${until}: ${JSON.stringify(out)}`)),
        60_000,
      );
      const check = () => {
        if (until.test(out[stream])) {
          clearTimeout(timer);
          resolve(out);
        }
      };
      child.stdout!.on('data', check);
      child.stderr!.on('data', check);
      child.once('exit', (code) => reject(new Error(`xx mcp --http exited ${code}: ${out.stderr}`)));
    });
  }

  /** Runs `xx mcp --http 127.0.0.1:0 …` expecting it to refuse to start; one still running after 60 s is stopped. */
  function refusal(args: string[], vars: Record<string, string>) {
    const { child, out } = launch(args, vars);
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGTERM'), 60_000);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, ...out });
      });
    });
  }

  it('--json: the one line carries the URL and this launch’s bearer, which the SDK client needs', async () => {
    const out = await serve(['--json'], env(), 'stdout', /\n/);
    const line = JSON.parse(out.stdout.split('\n')[0]!) as Record<string, string>;
    assert.deepEqual(Object.keys(line).sort(), ['bearer', 'bearer_source', 'transport', 'url']);
    assert.equal(line.transport, 'streamable-http');
    assert.equal(line.bearer_source, 'generated');
    assert.match(line.bearer!, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    assert.equal(out.stderr, '', 'nothing else printed, the token nowhere else');

    assertRefused(await raw(line.url!, {}), 'no bearer');
    const { client } = await sdkClient(line.url!, { Authorization: `Bearer ${line.bearer}` });
    try {
      assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), TOOLS);
    } finally {
      await client.close();
    }

    const again = JSON.parse((await serve(['--json'], env(), 'stdout', /\n/)).stdout.split('\n')[0]!) as {
      url: string;
      bearer: string;
    };
    assert.notEqual(again.bearer, line.bearer, 'a new token at each launch');
    assertRefused(await raw(again.url, { headers: { authorization: `Bearer ${line.bearer}` } }), 'the last token');
  });

  it('human output: the bearer beside the URL, and a client config with the Authorization header', async () => {
    const out = await serve([], env(), 'stderr', /client config: .*\n/);
    const url = /Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out.stderr)![1]!;
    const token = /Authorization: Bearer ([A-Za-z0-9_-]{43}) /.exec(out.stderr)![1]!;
    const config = JSON.parse(/client config: (.*)\n/.exec(out.stderr)![1]!) as Record<string, any>;
    assert.deepEqual(config.mcpServers.treasury, {
      type: 'http',
      url,
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(out.stdout, '');
    const { client } = await sdkClient(url, config.mcpServers.treasury.headers);
    try {
      assert.equal((await client.listTools()).tools.length, 6);
    } finally {
      await client.close();
    }
  });

  it('XX_MCP_HTTP_TOKEN is the bearer when set, and is never printed back', async () => {
    const supplied = 'my-stable-token.for_a_client~config:0123456789';
    const json = await serve(['--json'], env({ XX_MCP_HTTP_TOKEN: supplied }), 'stdout', /\n/);
    const line = JSON.parse(json.stdout.split('\n')[0]!) as Record<string, string>;
    assert.deepEqual(line, { url: line.url, transport: 'streamable-http', bearer_source: 'XX_MCP_HTTP_TOKEN' });
    const human = await serve([], env({ XX_MCP_HTTP_TOKEN: supplied }), 'stderr', /client config: .*\n/);
    assert.match(human.stderr, /must carry Authorization: Bearer <the token in XX_MCP_HTTP_TOKEN>/);
    assert.match(human.stderr, /"Authorization":"Bearer <XX_MCP_HTTP_TOKEN>"/);
    for (const printed of [json.stdout, json.stderr, human.stdout, human.stderr])
      assert.ok(!printed.includes(supplied), 'the supplied token is not printed');

    assertRefused(await raw(line.url!, {}), 'no bearer');
    assertRefused(await raw(line.url!, { headers: { authorization: `Bearer ${supplied.slice(0, -1)}X` } }), 'wrong');
    const { client } = await sdkClient(line.url!, { Authorization: `Bearer ${supplied}` });
    try {
      assert.equal((await client.listTools()).tools.length, 6);
    } finally {
      await client.close();
    }
  });

  it('an XX_MCP_HTTP_TOKEN too short, or with a space, is refused at start: invalid_argument, exit 2', async () => {
    for (const bad of ['x'.repeat(31), `${'x'.repeat(20)} ${'y'.repeat(20)}`, `${'é'.repeat(40)}`]) {
      const run = await refusal(['--json'], env({ XX_MCP_HTTP_TOKEN: bad }));
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, '', 'no server line: it never listened');
      const e = stderrJson(run, 'a bad XX_MCP_HTTP_TOKEN');
      assert.equal(e.error_code, 'invalid_argument');
      assert.deepEqual(e.details, { variable: 'XX_MCP_HTTP_TOKEN' });
      assert.match(e.user_message, /XX_MCP_HTTP_TOKEN must be 32/);
      assert.ok(!run.stderr.includes(bad), 'the refused value is not echoed');
    }
    const text = await refusal([], env({ XX_MCP_HTTP_TOKEN: 'short' }));
    assert.equal(text.code, 2);
    assert.match(text.stderr, /invalid_argument/);
  });
});

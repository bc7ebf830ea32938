/**
 * Every `xx mcp` tool declares an `outputSchema`, and what it answers — an answer or a refusal — matches it,
 * checked by the official MCP SDK client itself (it validates `structuredContent` against the schema it
 * listed, refusals included, and throws on a mismatch) over stdio against the real API (PostgreSQL, SoftHSM
 * signer), a stand-in JSON-RPC chain for the balance and a seller on loopback. Refusals come from the API (a
 * PAT it does not know: 401 with its recovery block), from an unreachable API, and from the seller (HTTP 500).
 * test/unit/cli/mcp-output-schema.test.ts shows the client failing on a schema that does not describe them.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { freePort } from '../../support/test-database.js';
import { ROOT, XX_BIN } from './xx-process.js';

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

const TOOLS = ['check_policy', 'discover', 'get_balance', 'list_wallets', 'pay', 'payment_history'];
const PAYEE = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** A JSON-RPC chain that answers every eth_call with 1.25 USDC (1,250,000 base units). */
const rpcHandler: http.RequestListener = (req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const answer = (r: { id: unknown; method: string }) => ({
      jsonrpc: '2.0',
      id: r.id,
      result: r.method === 'eth_call' ? `0x${(1_250_000).toString(16).padStart(64, '0')}` : '0x14a34',
    });
    const parsed = JSON.parse(body) as { id: unknown; method: string } | Array<{ id: unknown; method: string }>;
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
  });
};

describe('xx mcp: every tool declares an outputSchema its answers and refusals match (MCP SDK client, real API)', function () {
  this.timeout(240_000);
  const servers = new LoopbackServers();
  let t: TestTreasury;
  let pat: string;
  let walletId: string;
  let sellerUrl: string;

  before(async () => {
    const rpcUrl = await servers.listen(rpcHandler);
    t = await startTestTreasury({ extraEnv: { TREASURY_RPC_URLS: JSON.stringify({ 'eip155:84532': rpcUrl }) } });
    const me = await signInWithNewKey(t);
    pat = (
      await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'agent', scope_id: me.agent_id } })
    ).body.pat as string;
    const wallet = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
      token: me.session,
      body: {
        policy: { per_tx_cap_usd: '1', daily_cap_usd: '5', velocity_cap: { max_count: 10, window_seconds: 60 } },
      },
    });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id as string;
    sellerUrl = await servers.listen((req, res) =>
      req.url === '/fail'
        ? res.writeHead(500, { 'content-type': 'text/plain' }).end('down')
        : res.writeHead(200, { 'content-type': 'application/json' }).end('{"joke":"free"}'),
    );
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
  });

  /** A client of `xx mcp` (PAT and API URL as given) that has listed the tools, so it validates every answer. */
  async function listedClient(env: { XX_PAT: string; XX_API_URL: string }) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp', '--allow-private-targets'],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: fileTempDir('xx-mcp-schema-'), NO_COLOR: '1', ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-output-schema-test', version: '0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as ToolAnswer;
    return { client, tools, call };
  }

  it('lists an object outputSchema for every tool, with no undeclared keys and the refusal shape', async () => {
    const { client, tools } = await listedClient({ XX_PAT: pat, XX_API_URL: t.baseUrl });
    try {
      assert.deepEqual(tools.map((tool) => tool.name).sort(), TOOLS);
      for (const tool of tools) {
        const schema = tool.outputSchema as Record<string, any> | undefined;
        assert.ok(schema, `${tool.name} has an outputSchema`);
        assert.equal(schema.type, 'object', tool.name);
        assert.equal(schema.additionalProperties, false, tool.name);
        for (const key of ['error_code', 'user_message', 'recovery', 'details'])
          assert.ok(key in schema.properties, `${tool.name}: ${key}`);
        assert.deepEqual(schema.anyOf[1], { required: ['error_code', 'user_message'] }, tool.name);
      }
    } finally {
      await client.close();
    }
  });

  it('answers of every tool pass the client’s validation', async () => {
    const { client, call } = await listedClient({ XX_PAT: pat, XX_API_URL: t.baseUrl });
    try {
      const answers: Record<string, ToolAnswer> = {
        list_wallets: await call('list_wallets'),
        get_balance: await call('get_balance', { wallet_id: walletId }),
        check_policy: await call('check_policy', { to: PAYEE, amount_usd: '0.25' }),
        payment_history: await call('payment_history'),
        discover: await call('discover', { query: 'weather' }),
        pay: await call('pay', { url: `${sellerUrl}/free`, max_usd: '0.01' }),
      };
      for (const [name, answer] of Object.entries(answers))
        assert.equal(answer.isError, undefined, `${name}: ${JSON.stringify(answer).slice(0, 400)}`);
      assert.equal(answers.get_balance!.structuredContent!.balance_usd, '1.25');
      assert.equal(answers.list_wallets!.structuredContent!.wallets[0].id, walletId);
      assert.equal(answers.pay!.structuredContent!.seller_response.trust, 'untrusted');
    } finally {
      await client.close();
    }
  });

  it('check_policy: headroom is the room before this payment, allowed or refused', async () => {
    const { client, call } = await listedClient({ XX_PAT: pat, XX_API_URL: t.baseUrl });
    try {
      const allowed = (await call('check_policy', { to: PAYEE, amount_usd: '0.25' })).structuredContent!;
      const refused = (await call('check_policy', { to: PAYEE, amount_usd: '2' })).structuredContent!;
      assert.deepEqual([allowed.allowed, refused.allowed], [true, false]);
      assert.deepEqual(
        refused.refusing_rules.map((r: { rule: string }) => r.rule),
        ['per_tx_cap_usd'],
      );
      const before = { per_tx_usd: '1', daily_usd: '5', velocity_remaining: 10 };
      assert.deepEqual(allowed.headroom, before);
      assert.deepEqual(refused.headroom, before);
      assert.deepEqual([allowed.headroom_usd, refused.headroom_usd], ['1', '1']);
    } finally {
      await client.close();
    }
  });

  it('refusals of every tool pass the client’s validation', async () => {
    const unknownPat = await listedClient({ XX_PAT: `xx_pat_${'z'.repeat(40)}`, XX_API_URL: t.baseUrl });
    const noApi = await listedClient({ XX_PAT: pat, XX_API_URL: `http://127.0.0.1:${await freePort()}` });
    const good = await listedClient({ XX_PAT: pat, XX_API_URL: t.baseUrl });
    try {
      const refusals: Record<string, ToolAnswer> = {
        list_wallets: await unknownPat.call('list_wallets'),
        get_balance: await unknownPat.call('get_balance', { wallet_id: walletId }),
        check_policy: await unknownPat.call('check_policy', { to: PAYEE, amount_usd: '0.25' }),
        payment_history: await unknownPat.call('payment_history', { wallet_id: walletId }),
        pay: await unknownPat.call('pay', { url: `${sellerUrl}/free`, max_usd: '0.01' }),
        discover: await noApi.call('discover', { query: 'weather' }),
        get_balance_no_api: await noApi.call('get_balance'),
        pay_seller_error: await good.call('pay', { url: `${sellerUrl}/fail`, max_usd: '0.01' }),
        pay_bad_header: await good.call('pay', { url: `${sellerUrl}/free`, max_usd: '0.01', headers: { Cookie: 'x' } }),
      };
      for (const [name, refusal] of Object.entries(refusals)) {
        assert.equal(refusal.isError, true, name);
        assert.equal(typeof refusal.structuredContent!.error_code, 'string', name);
        assert.equal(typeof refusal.structuredContent!.user_message, 'string', name);
      }
      assert.equal(typeof refusals.list_wallets!.structuredContent!.recovery?.kind, 'string');
      assert.equal(refusals.pay_seller_error!.structuredContent!.details.seller_response.body, 'down');
    } finally {
      for (const c of [unknownPat, noApi, good]) await c.client.close();
    }
  });
});

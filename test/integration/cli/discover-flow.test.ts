/**
 * Agents find sellers in the public catalogue, against the real API (PostgreSQL, SoftHSM signer) and a seller on
 * loopback whose origin is verified:
 * - `xx discover <query>` (bin/xx.mjs with only XX_API_URL: no credentials) prints the match's price, network,
 *   seller, resource and schema summary; `--json` is the API's page; a bad flag is exit 2 naming it;
 * - an MCP conversation through the MCP SDK's own client over stdio (`xx mcp` with only XX_PAT and XX_API_URL):
 *   `discover` → `check_policy` on the payee and price it gave → `pay` the resource (the seller answers 402 with
 *   exactly the terms the catalogue listed, then 200 to the paid retry) → `payment_history` shows the payment.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { registerSeller, type ListedSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { ROOT, runXx, stderrJson, stdoutJson, XX_BIN } from './xx-process.js';

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

const JOKE = { joke: 'A catalogue walks into a bar.' };

describe('agents discover sellers: xx discover and the MCP discover tool (real API, loopback seller)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  let seller: ListedSeller;
  /** What the seller's paywall asks: the catalogue's own terms for the resource, set once the test read them. */
  let terms: { url: string; accepts: PaymentRequirements[] } | undefined;
  const paidRequests: string[] = [];

  const paywall: http.RequestListener = (req, res) => {
    if (!req.url?.startsWith('/joke') || !terms) return res.writeHead(404).end();
    const payment = req.headers['payment-signature'];
    if (typeof payment === 'string') {
      paidRequests.push(payment);
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(JOKE));
    }
    const challenge = encodePaymentRequired({
      x402Version: 2,
      error: 'payment required',
      resource: { url: terms.url, description: 'A joke', mimeType: 'application/json' },
      accepts: terms.accepts,
    });
    res.writeHead(402, { 'payment-required': challenge, 'content-type': 'application/json' }).end('{}');
  };

  before(async () => {
    const owner = await signInWithNewKey(t);
    seller = await registerSeller(t, servers, owner.session, 'Joke Factory', {
      endpoints: { 'GET /joke': '0.01' },
      serve: paywall,
    });
  });
  after(() => servers.closeAll());

  it('xx discover finds the registered seller, with no credentials', async () => {
    const env = { HOME: fileTempDir('xx-discover-'), XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    const text = await runXx(['discover', 'joke'], env);
    assert.equal(text.code, 0, text.stderr);
    for (const part of ['0.01 USD', 'eip155:84532', 'Joke Factory', `${seller.origin}/joke`, 'GET'])
      assert.ok(text.stdout.includes(part), `${part} in:\n${text.stdout}`);

    const json = stdoutJson(await runXx(['discover', 'joke factory', '--limit', '5', '--json'], env), 'discover');
    assert.equal(json.resources.length, 1);
    assert.equal(json.resources[0].resource, `${seller.origin}/joke`);
    assert.equal(json.resources[0].accepts[0].payTo, seller.payTo);
    assert.equal(json.resources[0].treasury.seller_id, seller.seller_id);

    const none = await runXx(['discover', 'no-such-thing'], env);
    assert.match(none.stdout, /Nothing in the catalogue matches "no-such-thing"/);
    const bad = await runXx(['discover', 'joke', '--limit', '0', '--json'], env);
    assert.equal(bad.code, 2);
    assert.equal(stderrJson(bad, 'discover --limit 0').error_code, 'invalid_argument');
  });

  it('an MCP conversation: discover → check_policy → pay → payment_history', async () => {
    const me = await signInWithNewKey(t);
    const minted = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    });
    const pat = minted.body.pat as string;
    const wallet = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: me.session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    // The seller's paywall asks exactly what the catalogue lists for the resource.
    const listed = await t.request('GET', `/discovery/resources?payTo=${seller.payTo}`);
    const item = listed.body.items[0];
    terms = { url: item.resource, accepts: item.accepts };

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fileTempDir('xx-mcp-discover-'),
        XX_PAT: pat,
        XX_API_URL: t.baseUrl,
        XX_MCP_ALLOW_PRIVATE_TARGETS: '1',
        NO_COLOR: '1',
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-discover-test', version: '0' });
    await client.connect(transport);
    await client.listTools(); // the client then checks every answer below against its tool's outputSchema
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as ToolAnswer;
    try {
      const found = await call('discover', { query: 'joke' });
      assert.equal(found.isError, undefined, JSON.stringify(found));
      const match = found.structuredContent!.resources[0];
      assert.equal(found.structuredContent!.trust, 'untrusted');
      assert.deepEqual(
        [match.resource, match.method, match.price_usd, match.network, match.pay_to, match.seller],
        [`${seller.origin}/joke`, 'GET', '0.01', 'eip155:84532', seller.payTo, 'Joke Factory'],
      );
      assert.match(found.content[0]!.text!, /untrusted data, not instructions/);

      const policy = await call('check_policy', { to: match.pay_to, amount_usd: match.price_usd });
      assert.equal(policy.isError, undefined, JSON.stringify(policy));
      assert.equal(policy.structuredContent!.allowed, true, JSON.stringify(policy.structuredContent));

      const paid = await call('pay', { url: match.resource, max_usd: match.price_usd });
      assert.equal(paid.isError, undefined, JSON.stringify(paid));
      assert.equal(paid.structuredContent!.status, 200, JSON.stringify(paid.structuredContent));
      assert.equal(paid.structuredContent!.paid, true);
      assert.equal(paidRequests.length, 1, 'the seller received one paid request');

      const history = await call('payment_history', {});
      assert.equal(history.isError, undefined, JSON.stringify(history));
      const payments = history.structuredContent!.payments as Array<Record<string, unknown>>;
      assert.equal(payments.length, 1, JSON.stringify(payments));
      assert.equal(String(payments[0]!.payee).toLowerCase(), seller.payTo.toLowerCase());
      assert.equal(payments[0]!.amount_usd, '0.01');
      assert.ok(!JSON.stringify([found, policy, paid, history]).includes(pat), 'no answer holds the PAT');
    } finally {
      await client.close();
    }
  });
});

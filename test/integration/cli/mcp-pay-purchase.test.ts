/**
 * `xx mcp`'s `pay` tool retries a purchase by its `purchase_id`, through the MCP SDK's own client over stdio
 * (bin/xx.mjs with XX_PAT and XX_API_URL) against the real API (PostgreSQL + SoftHSM) and a seller that
 * declares the x402 `payment-identifier` extension (test/support/purchase-seller.ts):
 * - a lost answer is a refusal naming the purchase_id; `pay` again with it sends the same payment (the same
 *   identifier, the same bytes) and Treasury signed once;
 * - after a restart of the server (nothing remembered), the same purchase_id gets Treasury's recorded
 *   authorization back: still one signature;
 * - a purchase_id of the wrong shape is refused by the tool's schema, nothing paid.
 */
import assert from 'node:assert/strict';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { ROOT, XX_BIN } from './xx-process.js';

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

describe('xx mcp pay: purchase_id retries a purchase (MCP SDK client over stdio, real API)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();
  const servers = new LoopbackServers();
  let seller: PurchaseSeller;
  let pat: string;
  let walletId: string;

  before(async () => {
    const me = await signInWithNewKey(t);
    const minted = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    });
    pat = minted.body.pat as string;
    const wallet = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, { token: me.session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id;
    seller = await startPurchaseSeller(servers);
  });
  after(() => servers.closeAll());

  async function mcpClient(): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp', '--allow-private-targets'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fileTempDir('xx-mcp-purchase-'),
        XX_PAT: pat,
        XX_API_URL: t.baseUrl,
        NO_COLOR: '1',
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-purchase-test', version: '0' });
    await client.connect(transport);
    return client;
  }
  const pay = async (client: Client, args: Record<string, unknown> = {}) =>
    (await client.callTool(
      { name: 'pay', arguments: { url: `${seller.url}/report`, max_usd: '0.05', ...args } },
      undefined,
      { timeout: 60_000 },
    )) as ToolAnswer;
  const authorizations = async () =>
    (await t.db.knex('authorizations').where({ wallet_id: walletId }).select('id')).length;

  it('a lost answer names the purchase_id; pay again with it sends the same payment, signed once', async () => {
    const client = await mcpClient();
    try {
      const before = await authorizations();
      seller.dropPaid = 1;
      const lost = await pay(client);
      assert.equal(lost.isError, true, JSON.stringify(lost));
      const purchaseId = lost.structuredContent!.purchase_id as string;
      assert.match(purchaseId, /^pay_[0-9a-f]{32}$/);
      assert.equal(seller.ids.at(-1), purchaseId, 'the identifier the seller saw');

      const retried = await pay(client, { purchase_id: purchaseId });
      assert.notEqual(retried.isError, true, JSON.stringify(retried));
      assert.equal(retried.structuredContent!.paid, true);
      assert.equal(retried.structuredContent!.purchase_id, purchaseId);
      const [first, second] = seller.paymentHeaders.slice(-2);
      assert.equal(second, first, 'the same payment, byte for byte');
      assert.equal(await authorizations(), before + 1, 'Treasury signed once');
    } finally {
      await client.close();
    }
  });

  it('after a restart, the same purchase_id gets the recorded authorization back; a malformed one is refused', async () => {
    let client = await mcpClient();
    let purchaseId: string;
    const before = await authorizations();
    try {
      seller.dropPaid = 1;
      purchaseId = (await pay(client)).structuredContent!.purchase_id as string;
    } finally {
      await client.close();
    }
    client = await mcpClient();
    try {
      const retried = await pay(client, { purchase_id: purchaseId });
      assert.equal(retried.structuredContent!.paid, true, JSON.stringify(retried));
      assert.equal(seller.ids.at(-1), purchaseId);
      assert.equal(await authorizations(), before + 1, 'Treasury signed once');

      const sent = seller.paymentHeaders.length;
      const bad = await pay(client, { purchase_id: 'pay_../../etc/passwd' });
      assert.equal(bad.isError, true);
      assert.equal(seller.paymentHeaders.length, sent, 'nothing was paid');
    } finally {
      await client.close();
    }
  });
});

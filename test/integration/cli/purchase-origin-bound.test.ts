/**
 * The CLI's purchase stores hold the buyer SDK's bound of live purchases per origin
 * (src/sdk/purchase-origin-bound.ts): the real `xx` binary with an agent PAT against the real API (PostgreSQL +
 * SoftHSM), a loopback seller that prices at one raw unit for a day and answers every paid retry with a 402
 * without settling (test/support/unsettling-seller.ts), and an honest one (test/support/purchase-seller.ts).
 * - `xx mcp`'s `pay` (its memory store, one purchase per call): MAX_LIVE_PURCHASES_PER_ORIGIN calls there are
 *   signed and refused by the seller; the next is refused `purchase_origin_limit_reached`, nothing signed; a
 *   `pay` to the honest seller is paid.
 * - `xx buy` (its file store, `<HOME>/.xx/purchases/`): with the origin's share of unsettled purchases in that
 *   store (made through the SDK on the same directory, signed by the same wallet), `xx buy` there is refused
 *   `purchase_origin_limit_reached`, nothing signed or sent; `xx buy` from the honest seller is paid.
 */
import assert from 'node:assert/strict';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import path from 'node:path';
import { createX402Buyer, filePurchaseStore, TreasuryClient, X402PaymentFailedError } from '../../../src/sdk/index.js';
import { MAX_LIVE_PURCHASES_PER_ORIGIN } from '../../../src/sdk/purchase-origin-bound.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { startPurchaseSeller, type PurchaseSeller } from '../../support/purchase-seller.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { startUnsettlingSeller, type UnsettlingSeller } from '../../support/unsettling-seller.js';
import { ROOT, runXx, stderrJson, stdoutJson, XX_BIN } from './xx-process.js';

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

describe('xx mcp pay and xx buy: one origin cannot fill the purchase store (real binary, real API)', function () {
  this.timeout(400_000);
  let t: TestTreasury;
  let pat: string;
  let walletId: string;
  let honest: PurchaseSeller;
  let unsettling: UnsettlingSeller;
  const servers = new LoopbackServers();

  before(async () => {
    t = await startTestTreasury();
    const { session, agent_id } = await signInWithNewKey(t);
    const wallet = await t.request('POST', `/v1/agents/${agent_id}/wallets`, { token: session, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id;
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pat = minted.body.pat;
  });
  beforeEach(async () => {
    honest = await startPurchaseSeller(servers);
    unsettling = await startUnsettlingSeller(servers);
  });
  after(async () => {
    await servers.closeAll();
    await t?.stop();
  });

  const signatures = async () => (await t.db.knex('authorizations').where({ wallet_id: walletId }).select('id')).length;

  it("xx mcp pay: the unsettling origin's new purchases are refused past its share; the honest seller is paid", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp', '--allow-private-targets'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fileTempDir('xx-mcp-origin-bound-'),
        XX_PAT: pat,
        XX_API_URL: t.baseUrl,
        NO_COLOR: '1',
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-origin-bound-test', version: '0' });
    await client.connect(transport);
    const pay = async (url: string) =>
      (await client.callTool({ name: 'pay', arguments: { url, max_usd: '0.05' } }, undefined, {
        timeout: 60_000,
      })) as ToolAnswer;
    try {
      const codes: unknown[] = [];
      for (let i = 0; i <= MAX_LIVE_PURCHASES_PER_ORIGIN; i++) {
        const answer = await pay(`${unsettling.url}/r${i}`);
        assert.equal(answer.isError, true, JSON.stringify(answer));
        codes.push(answer.structuredContent!.error_code);
      }
      const signed = await signatures();
      assert.deepEqual(codes, [
        ...Array<string>(MAX_LIVE_PURCHASES_PER_ORIGIN).fill('payment_failed'),
        'purchase_origin_limit_reached',
      ]);
      assert.equal(unsettling.paymentHeaders.length, MAX_LIVE_PURCHASES_PER_ORIGIN, 'the refused one was not sent');

      const paid = await pay(`${honest.url}/report`);
      assert.notEqual(paid.isError, true, JSON.stringify(paid));
      assert.equal(paid.structuredContent!.paid, true);
      assert.equal(await signatures(), signed + 1, 'only the honest purchase was signed after the refusal');
    } finally {
      await client.close();
    }
  });

  it("xx buy: with the origin's share unsettled in the CLI's store, a new purchase there is refused", async () => {
    const home = fileTempDir('xx-buy-origin-bound-');
    const env = { HOME: home, XX_PAT: pat, XX_API_URL: t.baseUrl, NO_COLOR: '1' };
    const purchases = filePurchaseStore({ dir: path.join(home, '.xx', 'purchases') });
    const client = new TreasuryClient({ apiUrl: t.baseUrl, token: pat });
    const buyer = createX402Buyer({ client, walletId, purchases, maxPriceUsd: '0.05' });
    for (let i = 0; i < MAX_LIVE_PURCHASES_PER_ORIGIN; i++)
      await assert.rejects(buyer.request(`${unsettling.url}/r${i}`, { purchaseKey: `k${i}` }), X402PaymentFailedError);
    const signed = await signatures();
    const sent = unsettling.paymentHeaders.length;

    // No chain here to confirm the honest seller's transaction: its settlement report is not waited for.
    const buy = (url: string) => runXx(['buy', url, '--max', '0.05', '--json', '--settlement-wait', '0'], env);
    const refused = await buy(`${unsettling.url}/more`);
    assert.notEqual(refused.code, 0, refused.stdout);
    assert.equal(stderrJson(refused, 'buy at the full origin').error_code, 'purchase_origin_limit_reached');
    assert.equal(unsettling.paymentHeaders.length, sent, 'nothing was sent');
    assert.equal(await signatures(), signed, 'nothing was signed');

    const paid = stdoutJson(await buy(`${honest.url}/report`), 'buy from the honest seller');
    assert.equal(paid.paid, true);
    assert.equal(await signatures(), signed + 1);
  });
});

/**
 * A Treasury-custodied Solana wallet pays an official `@x402/svm` seller, end to end: the real API
 * (PostgreSQL, SoftHSM signer with the wallet's Ed25519 key, TREASURY_SOLANA_RPC_URL = the offline chain of
 * ops/solana/local-solana.ts) and the seller of ../../unit/sdk/solana-buyer-fixtures.ts settled by the chain's
 * facilitator. A 402 offering Base then Solana is paid on Solana, the wallet's network, three ways:
 * - the buyer SDK (`createX402Buyer({ client, walletId })`): Treasury answers the transaction, the SDK checks
 *   it and sends it; the result names the network and the base58 signature;
 * - `xx buy --network solana-devnet` with the agent PAT (the agent's wallet on that network);
 * - the `xx mcp` `pay` tool over stdio with `network: "solana-devnet"`.
 * Each moves exactly the price from the wallet to the seller's pay-to, on chain.
 */
import assert from 'node:assert/strict';
// eslint-disable-next-line import-x/no-unresolved -- the SDK's "./*" export maps types to *.js.d.ts, which this resolver cannot follow (tsc can)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
// eslint-disable-next-line import-x/no-unresolved -- as above
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { createX402Buyer, TreasuryClient } from '../../../src/sdk/index.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import {
  PRICE_UNITS,
  SOLANA_DEVNET,
  startSolanaSeller,
  usdcOf,
  type SolanaSeller,
} from '../../unit/sdk/solana-buyer-fixtures.js';
import { ROOT, runXx, stdoutJson, XX_BIN } from './xx-process.js';

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, any>; content: Array<{ text?: string }> };

describe('a Treasury Solana wallet pays an official @x402/svm seller (SDK, xx buy, xx mcp pay; real API and signer)', function () {
  this.timeout(300_000);
  let solana: LocalSolana;
  let seller: SolanaSeller;
  let t: TestTreasury;
  let pat: string;
  let wallet: { id: string; address: string; network: string };
  const moved = async (): Promise<[bigint, bigint]> => [
    await usdcOf(solana, wallet.address),
    await usdcOf(solana, seller.payTo),
  ];

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    seller = await startSolanaSeller(solana);
    t = await startTestTreasury({ extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl } });
    const me = await signInWithNewKey(t);
    const minted = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id },
    });
    pat = minted.body.pat as string;
    const made = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
      token: me.session,
      body: { chain: 'solana-devnet' },
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    wallet = made.body;
    assert.equal(wallet.network, SOLANA_DEVNET);
    await solana.faucet.fundUsdc(wallet.address as never, 1_000_000n);
  });
  after(async () => {
    await t?.stop();
    await seller?.close();
    await solana?.stop();
  });

  it('the buyer SDK: Base-or-Solana is paid on Solana; exactly the price moves; the result names network and signature', async () => {
    const before = await moved();
    const client = new TreasuryClient({ apiUrl: t.baseUrl, token: pat });
    const result = await createX402Buyer({ client, walletId: wallet.id, maxPriceUsd: '0.05' }).request(
      `${seller.url}/both`,
    );
    assert.equal(result.status, 200, result.body);
    assert.deepEqual([result.paid, result.network, result.receipt?.network], [true, SOLANA_DEVNET, SOLANA_DEVNET]);
    assert.match(result.receipt!.transaction, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.equal(result.receipt?.payer, wallet.address);
    assert.ok(result.payment && 'transaction' in result.payment && result.payment.decision_id);
    assert.deepEqual(await moved(), [before[0] - PRICE_UNITS, before[1] + PRICE_UNITS]);
    assert.deepEqual(seller.evmFacilitatorCalls, []);
    const balance = await client.getBalance(wallet.id);
    assert.equal(balance.balance_raw, (before[0] - PRICE_UNITS).toString());
  });

  it('xx buy --network solana-devnet with the agent PAT pays from the agent wallet on Solana', async () => {
    const before = await moved();
    const home = fileTempDir('xx-sol-buy-');
    const out = stdoutJson(
      await runXx(
        [
          'buy',
          `${seller.url}/both`,
          '--network',
          'solana-devnet',
          '--capability',
          'jokes.read',
          '--max',
          '0.05',
          '--json',
        ],
        {
          HOME: home,
          XX_PAT: pat,
          XX_API_URL: t.baseUrl,
          NO_COLOR: '1',
        },
      ),
      'xx buy --network solana-devnet',
    );
    assert.deepEqual(
      [out.status, out.paid, out.network, out.receipt.payer],
      [200, true, SOLANA_DEVNET, wallet.address],
    );
    assert.deepEqual(await moved(), [before[0] - PRICE_UNITS, before[1] + PRICE_UNITS]);
    const row = await t.db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at', 'desc').first();
    assert.equal(row.capability, 'jokes.read', '--capability reached the pay request');
  });

  it('the xx mcp pay tool with network solana-devnet pays the Solana seller', async () => {
    const before = await moved();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [XX_BIN, 'mcp', '--allow-private-targets'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fileTempDir('xx-mcp-sol-'),
        XX_PAT: pat,
        XX_API_URL: t.baseUrl,
        NO_COLOR: '1',
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'treasury-solana-test', version: '0' });
    await client.connect(transport);
    try {
      const answer = (await client.callTool(
        {
          name: 'pay',
          arguments: { url: `${seller.url}/both`, max_usd: '0.05', network: 'solana-devnet', capability: 'jokes.mcp' },
        },
        undefined,
        { timeout: 120_000 },
      )) as ToolAnswer;
      assert.equal(answer.isError, undefined, JSON.stringify(answer));
      const s = answer.structuredContent!;
      assert.deepEqual(
        [s.status, s.paid, s.network, s.wallet_id, s.amount_usd],
        [200, true, SOLANA_DEVNET, wallet.id, '0.01'],
      );
      assert.match(s.tx_hash, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
      assert.deepEqual(await moved(), [before[0] - PRICE_UNITS, before[1] + PRICE_UNITS]);
      const row = await t.db
        .knex('authorizations')
        .where({ wallet_id: wallet.id })
        .orderBy('created_at', 'desc')
        .first();
      assert.equal(row.capability, 'jokes.mcp', 'the capability argument reached the pay request');
    } finally {
      await client.close();
    }
  });
});

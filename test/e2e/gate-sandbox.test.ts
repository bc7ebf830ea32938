/**
 * The gate end to end on the `npm start` sandbox, nothing faked: anvil with the test USDC, the official-package
 * facilitator, Treasury (PostgreSQL + SoftHSM), treasury-gate as its own process, and a demo origin with no
 * payment code registered as an `mpp` seller (docs/gate.md).
 * - the official @x402/fetch buyer pays `gate_demo_url` and receives the origin's body; balances move by the price;
 * - a Treasury wallet pays it through `xx buy`;
 * - each payment's ledger row lands on the mpp seller with the forecast endpoint and content_hash = sha256(body),
 *   and is verified on chain against the seller's proven pay-to;
 * - the origin never saw a payment header.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient, erc20Abi, http as viemHttp } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { DEMO_FORECAST } from '../../ops/sandbox/demo-origin.js';
import { startSandbox, type RunningSandbox } from '../support/sandbox-harness.js';
import { runXx, stdoutJson } from '../integration/cli/xx-process.js';
import { fileTempDir } from '../support/temp-dirs.js';

interface LedgerEntry {
  tx_hash: string;
  endpoint_id: string | null;
  content_hash: string | null;
  route: string | null;
  status: string;
  reason: string | null;
}

describe('gate end to end on the sandbox (official buyer and xx buy → gate → origin without payment code)', function () {
  this.timeout(300_000);
  let sandbox: RunningSandbox;
  let servicePat: string;
  let forecastEndpoint: string;
  const body = JSON.stringify(DEMO_FORECAST);

  before(async () => {
    sandbox = await startSandbox();
    servicePat = (
      JSON.parse(fs.readFileSync(path.join(sandbox.dataDir, 'demo-gate.json'), 'utf8')) as { service_pat: string }
    ).service_pat;
    const endpoints = (await (
      await fetch(`${sandbox.info.api_url}/v1/sellers/${sandbox.info.gate_demo_seller_id}/endpoints`, {
        headers: { authorization: `Bearer ${servicePat}` },
      })
    ).json()) as { endpoints: Array<{ endpoint_id: string; path: string }> };
    forecastEndpoint = endpoints.endpoints.find((e) => e.path === '/forecast')!.endpoint_id;
  });
  after(async () => {
    await sandbox?.stop();
  });

  async function fund(address: string, usd: string) {
    const res = await fetch(sandbox.info.faucet_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, amount_usd: usd }),
    });
    assert.equal(res.status, 200, await res.clone().text());
  }

  async function balanceOf(address: `0x${string}`): Promise<bigint> {
    const client = createPublicClient({ transport: viemHttp(sandbox.info.rpc_url) });
    return client.readContract({
      address: sandbox.info.usdc as `0x${string}`,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [address],
    });
  }

  /** The mpp seller's ledger row for `tx`, once verified on chain (or the last state seen). */
  async function verifiedRow(tx: string): Promise<LedgerEntry | undefined> {
    let row: LedgerEntry | undefined;
    for (let i = 0; i < 200 && row?.status !== 'verified'; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      const ledger = (await (
        await fetch(`${sandbox.info.api_url}/v1/ledger`, { headers: { authorization: `Bearer ${servicePat}` } })
      ).json()) as { entries: LedgerEntry[] };
      row = ledger.entries.find((e) => e.tx_hash === tx.toLowerCase());
    }
    return row;
  }

  it('sandbox.json names the gate; unpaid, the demo URL is a 402 in both dialects', async () => {
    assert.match(sandbox.info.gate_url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(sandbox.info.gate_demo_url.startsWith(`${sandbox.info.gate_url}/`));
    const res = await fetch(sandbox.info.gate_demo_url);
    assert.equal(res.status, 402);
    assert.ok(res.headers.get('payment-required'));
    assert.equal(res.headers.get('x-payment-required'), res.headers.get('payment-required'));
    assert.match(sandbox.output(), /gate {11}: http/);
  });

  it("the official @x402/fetch buyer pays gate_demo_url and gets the origin's body; the ledger row has the endpoint and hash", async () => {
    const key = generatePrivateKey();
    const buyer = privateKeyToAccount(key);
    await fund(buyer.address, '1');
    const before = await balanceOf(buyer.address);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:84532', new ExactEvmScheme(buyer)));
    const res = await pay(sandbox.info.gate_demo_url);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.equal(text, body);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, true);
    assert.equal(await balanceOf(buyer.address), before - 10_000n);
    const row = await verifiedRow(receipt.transaction);
    assert.ok(row, `no ledger row for ${receipt.transaction}`);
    assert.equal(row.endpoint_id, forecastEndpoint);
    assert.equal(row.content_hash, createHash('sha256').update(body).digest('hex'));
    assert.deepEqual([row.status, row.reason], ['verified', null]);
  });

  it('a Treasury wallet pays it through `xx buy`; its ledger row lands too', async () => {
    const home = fileTempDir('xx-gate-');
    const env = {
      HOME: home,
      XX_HOME: path.join(home, '.xx'),
      TREASURY_DATA_DIR: sandbox.dataDir,
      XX_KEYSTORE_PASSPHRASE: 'correct horse battery staple',
      XX_KEYSTORE_SCRYPT_LOG_N: '12',
      NO_COLOR: '1',
    };
    stdoutJson(await runXx(['init', '--server', sandbox.info.api_url, '--label', 'gate-buyer', '--json'], env), 'init');
    stdoutJson(await runXx(['fund', '--testnet', '--amount', '1', '--json'], env), 'fund');
    const bought = stdoutJson(await runXx(['buy', sandbox.info.gate_demo_url, '--max', '0.05', '--json'], env), 'buy');
    assert.equal(bought.status, 200);
    assert.equal(bought.paid, true);
    assert.deepEqual(bought.body, DEMO_FORECAST);
    const row = await verifiedRow(bought.receipt.txHash);
    assert.ok(row, `no ledger row for ${bought.receipt.txHash}`);
    assert.equal(row.endpoint_id, forecastEndpoint);
    assert.equal(row.content_hash, createHash('sha256').update(body).digest('hex'));
  });

  it('the origin never saw a payment header', async () => {
    const seen = (await (await fetch(`${sandbox.info.gate_demo_origin_url}/__seen-headers`)).json()) as {
      requests: Array<{ path: string; header_names: string[] }>;
    };
    const paid = seen.requests.filter((r) => r.path === '/forecast');
    assert.ok(paid.length >= 2, JSON.stringify(seen));
    for (const r of paid)
      assert.deepEqual(
        r.header_names.filter((h) => /payment/i.test(h)),
        [],
      );
  });
});

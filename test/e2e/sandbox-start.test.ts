/**
 * The README's first command: `npm start` on embedded defaults brings up PostgreSQL, SoftHSM, the signer,
 * the API (and its dashboard, built when stale), the local chain, facilitator, faucet and demo seller; writes sandbox.json (0600); serves a real
 * mint → wallet → fund → pay the demo seller flow, whose merchant of record is the platform (the buyer pays the
 * collection wallet Treasury holds; a payout flush moves it to the seller's proven pay-to on chain); limits 400 rapid nonce requests from one address with 429
 * and Retry-After (rate limits are on by default); and stops cleanly on Ctrl-C.
 * Also: the API refuses to start while a migration is pending.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createTestDatabase, freePort } from '../support/test-database.js';
import { decodeSettlementReceipt } from '../../src/x402/header-codec.js';
import { payDemoSeller, startSandbox } from '../support/sandbox-harness.js';
import { createPublicClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { signInFresh } from '../../ops/sandbox/demo-seller.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('npm start (sandbox on embedded defaults)', function () {
  this.timeout(240_000);

  it('starts everything, serves a mint and a wallet, writes sandbox.json 0600, and stops on Ctrl-C', async () => {
    const running = await startSandbox();
    const { dataDir, sandboxFile, apiPort } = running;
    const output = () => running.output();
    try {
      assert.equal(fs.statSync(sandboxFile).mode & 0o777, 0o600);
      const sandbox = running.info;
      assert.equal(sandbox.chain_id, 84532);
      assert.equal(sandbox.key_backend, 'pkcs11', 'SoftHSM unless TREASURY_SANDBOX_KEY_BACKEND says otherwise');
      assert.equal(sandbox.kms_endpoint, undefined);
      assert.equal(sandbox.usdc, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
      const supported = (await (await fetch(`${sandbox.facilitator_url}/supported`)).json()) as {
        kinds: Array<{ scheme: string; network: string }>;
      };
      assert.ok(
        supported.kinds.some((k) => k.scheme === 'exact' && k.network === 'eip155:84532'),
        JSON.stringify(supported),
      );
      assert.equal(sandbox.api_url, `http://127.0.0.1:${apiPort}`);
      assert.match(output(), new RegExp(`Treasury is running at http://127.0.0.1:${apiPort}`));
      // The dashboard: built by npm start, its address printed and recorded, served by the API with its CSP.
      assert.equal(sandbox.dashboard_url, `http://127.0.0.1:${apiPort}/dashboard`);
      assert.ok(output().includes(`dashboard      : http://127.0.0.1:${apiPort}/dashboard/`), output());
      const page = await fetch(`${sandbox.dashboard_url}/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
      assert.match(await page.text(), /<div id="app">/);

      const mint = await fetch(`${sandbox.api_url}/v1/treasury`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.admin_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ owner_type: 'agent', owner_id: 'sandbox' }),
      });
      assert.equal(mint.status, 201);
      const { api_key } = (await mint.json()) as { api_key: string };
      const wallet = await fetch(`${sandbox.api_url}/v1/wallets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${api_key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'sandbox' }),
      });
      assert.equal(wallet.status, 201);
      const created = (await wallet.json()) as { id: string; address: string };
      assert.match(created.address, /^0x[0-9a-fA-F]{40}$/);
      const funded = await fetch(sandbox.faucet_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address: created.address, amount_usd: '3' }),
      });
      assert.equal(funded.status, 200, await funded.clone().text());
      const balance = (await (
        await fetch(`${sandbox.api_url}/v1/wallets/${created.id}/balance`, {
          headers: { authorization: `Bearer ${api_key}` },
        })
      ).json()) as { balance_usd: string; stale: boolean };
      assert.deepEqual(
        { usd: balance.balance_usd, stale: balance.stale },
        { usd: '3', stale: false },
        'the API reads the sandbox chain',
      );

      // Pay the demo seller with the Treasury wallet: challenge → Treasury signs → paid retry → settled on chain.
      const paid = await payDemoSeller(sandbox, created.id, api_key);
      assert.equal(paid.status, 200, await paid.clone().text());
      assert.equal(((await paid.json()) as { paid: boolean }).paid, true);
      const receipt = decodeSettlementReceipt(paid.headers.get('payment-response')!);
      assert.equal(receipt.success, true);
      // The demo seller reports the payment; the sandbox verifies it on its chain against the proven pay-to.
      const demoPat = (JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-seller.json'), 'utf8')) as { pat: string })
        .pat;
      let row: { status: string; reason: string | null } | undefined;
      for (let i = 0; i < 150 && row?.status !== 'verified'; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        const ledger = (await (
          await fetch(`${sandbox.api_url}/v1/ledger`, { headers: { authorization: `Bearer ${demoPat}` } })
        ).json()) as { entries: Array<{ tx_hash: string; status: string; reason: string | null }> };
        row = ledger.entries.find((e) => e.tx_hash === String(receipt.transaction).toLowerCase());
      }
      assert.deepEqual(
        [row?.status, row?.reason],
        ['verified', null],
        "the demo seller's ledger row is verified on the sandbox chain",
      );
      // The platform is the demo seller's merchant of record: the buyer paid the collection wallet Treasury holds
      // for it, and a payout flush (by the seller's owner) moves what was collected to its proven pay-to on chain.
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-seller.json'), 'utf8')) as {
        seller_id: string;
        pay_to: Address;
        owner_key: Hex;
      };
      assert.notEqual(sandbox.demo_seller_collect_to, demo.pay_to);
      const sandboxChain = createPublicClient({ transport: http(sandbox.rpc_url) });
      const balanceOf = (owner: Address) =>
        sandboxChain.readContract({
          address: sandbox.usdc as Address,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [owner],
        });
      assert.equal(await balanceOf(sandbox.demo_seller_collect_to), 10_000n, 'the platform collected the payment');
      const payToBefore = await balanceOf(demo.pay_to);
      const owner = await signInFresh(sandbox.api_url, sandbox.api_url, sandbox.chain_id, demo.owner_key);
      const flushed = await fetch(`${sandbox.api_url}/v1/sellers/${demo.seller_id}/payouts/flush`, {
        method: 'POST',
        headers: { authorization: `Bearer ${owner.session}` },
      });
      const payouts = (await flushed.json()) as {
        flushes: Array<{ status: string; amount_usd: string; pay_to: string; tx_hash: string | null }>;
      };
      assert.equal(flushed.status, 200, JSON.stringify(payouts));
      assert.deepEqual(
        payouts.flushes.map((f) => [f.status, f.amount_usd, f.pay_to]),
        [['settled', '0.01', demo.pay_to]],
        JSON.stringify(payouts),
      );
      assert.match(String(payouts.flushes[0]!.tx_hash), /^0x[0-9a-f]{64}$/);
      assert.equal(await balanceOf(demo.pay_to), payToBefore + 10_000n, "the seller's pay-to received it");
      assert.equal(await balanceOf(sandbox.demo_seller_collect_to), 0n);
      const after = (await (
        await fetch(`${sandbox.api_url}/v1/wallets/${created.id}/balance`, {
          headers: { authorization: `Bearer ${api_key}` },
        })
      ).json()) as { balance_usd: string };
      assert.equal(after.balance_usd, '2.99');
      const ready = await fetch(`${sandbox.api_url}/readyz`);
      assert.equal(ready.status, 200);

      // Rate limits are on in the sandbox: 400 rapid nonce requests from this one address meet 429 with Retry-After.
      const statuses: number[] = [];
      let limited: Response | undefined;
      for (let i = 0; i < 400; i += 20) {
        const batch = await Promise.all(
          Array.from({ length: 20 }, () => fetch(`${sandbox.api_url}/v1/identity/nonce`, { method: 'POST' })),
        );
        for (const res of batch) {
          statuses.push(res.status);
          if (res.status === 429 && !limited) limited = res;
          else await res.body?.cancel();
        }
      }
      assert.ok(limited, `no 429 among ${statuses.length} nonce requests`);
      assert.match(limited.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
      assert.equal(((await limited.json()) as { error_code: string }).error_code, 'rate_limited');

      await running.stop();
      assert.ok(!fs.existsSync(sandboxFile), `sandbox.json removed on stop:\n${output()}\n${running.logs()}`);
      assert.match(output(), /sandbox stopped/);
      assert.ok(!fs.existsSync(path.join(dataDir, 'pg', 'data', 'postmaster.pid')), 'embedded PostgreSQL stopped');
      const rpcGone = await fetch(sandbox.rpc_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
      }).then(
        () => false,
        () => true,
      );
      assert.ok(rpcGone, 'anvil stopped');
    } finally {
      await running.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('treasury-api refuses to start while a migration is pending', async () => {
    const db = await createTestDatabase({ migrate: false });
    try {
      const res = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/api/main.ts')], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: db.connectionString,
          TREASURY_PORT: String(await freePort()),
          TREASURY_SIGNER_SOCKET: '/nonexistent.sock',
        },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(res.status, 3, res.stderr + res.stdout);
      assert.match(res.stdout + res.stderr, /migrations are pending; run `npm run migrate`/);
    } finally {
      await db.drop();
    }
  });
});

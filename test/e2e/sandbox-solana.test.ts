/**
 * `npm start` with the offline Solana chain (ops/sandbox/sandbox-solana.ts): sandbox.json names its RPC (which
 * answers getHealth), devnet's CAIP-2 id, the USDC mint, the official facilitator, the faucet and an official x402
 * seller; the faucet credits a base58 address and an official @x402/svm client pays the demo seller with it; the
 * chain stops with the rest on SIGTERM. TREASURY_SANDBOX_SOLANA=0 leaves all of it out. A non-loopback
 * TREASURY_SOLANA_RPC_URL stops the start with `sandbox_solana_rpc_not_loopback` before anything runs, without
 * printing the URL.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSolanaRpc, generateKeyPairSigner, type Address } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { associatedTokenAddress } from '../../ops/solana/spl-token-layouts.js';
import { spawnDetached } from '../support/detached-child.js';
import { startSandbox } from '../support/sandbox-harness.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const SOLANA_KEYS = [
  'solana_rpc_url',
  'solana_network',
  'solana_usdc_mint',
  'solana_facilitator_url',
  'solana_fee_payer',
  'solana_faucet_url',
  'solana_demo_seller_url',
  'solana_demo_seller_pay_to',
];

const postJson = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('npm start: the offline Solana chain', function () {
  this.timeout(240_000);

  it('refuses a non-loopback TREASURY_SOLANA_RPC_URL with a stable code before anything starts', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-sandbox-solana-refused-'));
    try {
      const secretUrl = 'https://api.devnet.solana.com/?api-key=do-not-print-me';
      const run = spawnDetached(process.execPath, ['--import', 'tsx', 'ops/sandbox/start.ts'], {
        cwd: ROOT,
        env: { ...process.env, TREASURY_DATA_DIR: dataDir, TREASURY_SOLANA_RPC_URL: secretUrl },
      });
      const code = await Promise.race([run.exited, sleep(60_000).then(() => 'timeout' as const)]);
      if (code === 'timeout') process.kill(-run.child.pid!, 'SIGKILL');
      assert.equal(code, 1, run.output());
      assert.match(
        run.output(),
        /sandbox failed to start \(sandbox_solana_rpc_not_loopback\): TREASURY_SOLANA_RPC_URL/,
      );
      assert.doesNotMatch(run.output(), /do-not-print-me|api\.devnet/, 'the URL is never printed');
      assert.ok(!fs.existsSync(path.join(dataDir, 'pg')), 'no PostgreSQL was started');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('runs the chain, faucet, facilitator and an official seller; sandbox.json names them; SIGTERM stops them', async () => {
    const began = Date.now();
    const running = await startSandbox({ TREASURY_SANDBOX_CHAIN: '0' });
    const startedIn = Date.now() - began;
    try {
      const info = running.info;
      assert.deepEqual(
        SOLANA_KEYS.filter((k) => typeof info[k as keyof typeof info] !== 'string'),
        [],
        JSON.stringify(info),
      );
      assert.equal(info.solana_network, DEVNET);
      assert.equal(info.solana_usdc_mint, '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
      for (const key of SOLANA_KEYS.filter((k) => k.endsWith('_url')))
        assert.match(String(info[key as keyof typeof info]), /^http:\/\/127\.0\.0\.1:[0-9]+(\/|$)/, key);
      const rpc = createSolanaRpc(info.solana_rpc_url!);
      assert.equal(await rpc.getHealth().send(), 'ok');
      assert.match(running.output(), /solana {9}: http:\/\/127\.0\.0\.1:[0-9]+/);

      // The faucet credits a base58 address as given; an official client pays the seller with it.
      const buyer = await generateKeyPairSigner();
      const funded = await postJson(info.solana_faucet_url!, { address: buyer.address, amount_usd: '1.5' });
      assert.equal(funded.status, 200, await funded.clone().text());
      const credit = (await funded.json()) as Record<string, string>;
      assert.deepEqual([credit.address, credit.balance_raw, credit.network], [buyer.address, '1500000', DEVNET]);
      const evm = await postJson(info.solana_faucet_url!, { address: `0x${'ab'.repeat(20)}`, amount_usd: '1' });
      assert.equal(evm.status, 400, 'an EVM address is not a Solana address');
      const usdcOf = async (owner: string) =>
        BigInt(
          (
            await rpc
              .getTokenAccountBalance(await associatedTokenAddress(owner as Address, info.solana_usdc_mint as Address))
              .send()
          ).value.amount,
        );
      const client = new x402Client().register(DEVNET, new ExactSvmScheme(buyer, { rpcUrl: info.solana_rpc_url! }));
      const paid = await wrapFetchWithPayment(fetch, client)(info.solana_demo_seller_url!);
      assert.equal(paid.status, 200, await paid.clone().text());
      assert.equal(((await paid.json()) as { paid: boolean }).paid, true);
      assert.equal(decodePaymentResponseHeader(paid.headers.get('payment-response')!).success, true);
      assert.equal(await usdcOf(buyer.address), 1_490_000n);
      assert.equal(await usdcOf(info.solana_demo_seller_pay_to!), 10_000n);

      // SIGTERM (to every process of the group, as a service manager sends it): the Solana chain stops too.
      process.kill(-running.child.pid!, 'SIGTERM');
      for (let i = 0; i < 600 && !/sandbox stopped/.test(running.output()); i++) await sleep(100);
      assert.match(running.output(), /Solana chain stopped/);
      const gone = await fetch(info.solana_rpc_url!).then(
        () => false,
        () => true,
      );
      assert.ok(gone, 'the Solana RPC no longer answers');
      console.log(`      (sandbox without the EVM chain, with Solana: ready in ${(startedIn / 1000).toFixed(1)} s)`);
    } finally {
      await running.stop();
      fs.rmSync(running.dataDir, { recursive: true, force: true });
    }
  });

  it('TREASURY_SANDBOX_SOLANA=0 leaves the Solana chain out', async () => {
    const began = Date.now();
    const running = await startSandbox({ TREASURY_SANDBOX_CHAIN: '0', TREASURY_SANDBOX_SOLANA: '0' });
    const startedIn = Date.now() - began;
    try {
      assert.deepEqual(
        Object.keys(running.info).filter((k) => k.startsWith('solana_')),
        [],
        JSON.stringify(running.info),
      );
      assert.doesNotMatch(running.output(), /Solana/);
      console.log(`      (sandbox without either chain: ready in ${(startedIn / 1000).toFixed(1)} s)`);
    } finally {
      await running.stop();
      fs.rmSync(running.dataDir, { recursive: true, force: true });
    }
  });
});

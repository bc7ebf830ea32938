/**
 * `xx buy --self-custody` against what a seller or a folder may plant, the real `xx` binary and a loopback
 * seller that records every payment header it receives (nothing reaches a chain: no payment is expected to
 * leave, and the sandbox case is answered 200 without settling):
 * - a 402 naming another token than the chain's USDC (an 8-decimal ERC-20 on Base Sepolia, an SPL mint on
 *   Solana devnet) is not paid: exit 1 `NoCompatibleAcceptError`, the seller receives no payment header; a 402
 *   offering that token first and USDC second is paid in USDC;
 * - with XX_ENV=dev, a `.treasury/sandbox.json` in the folder the command runs from that names Base mainnet
 *   (`chain_id: 8453`) or an RPC off this machine moves nothing: exit 2 `sandbox_chain_not_local` for `buy`
 *   and `wallet balance`, no payment header on eip155:8453; a group-writable one is `sandbox_file_untrusted`;
 *   the sandbox's own description (eip155:84532, loopback RPC, 0600) still pays on the sandbox chain.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import path from 'node:path';
import { BASE_SEPOLIA_USDC, paymentRequirements, SOLANA_DEVNET } from '../../builders/payment-requirements.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { fileTempDir } from '../../support/temp-dirs.js';
import { runXx, stderrJson, stdoutJson, XX_BIN, xxHomeFor, type XxRun } from './xx-process.js';

const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const PASSPHRASE = 'correct horse battery';
/** Nothing answers here: self-custody payments never reach Treasury. */
const API_URL = 'http://127.0.0.1:9';
/** Base's cbBTC address (8 decimals): 1,000,000 units of it are 0.01 BTC, not 1 USD. */
const CBBTC = '0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf';
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const SPL_MINT = 'So11111111111111111111111111111111111111112';
const SOLANA_PAY_TO = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const FEE_PAYER = 'EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm';

const cbBtc = paymentRequirements({
  amount: '1000000',
  asset: CBBTC,
  extra: { name: 'Coinbase Wrapped BTC', version: '2' },
});
const OFFERS: Record<string, Array<Record<string, unknown>>> = {
  '/cbbtc': [cbBtc],
  '/spl': [
    {
      scheme: 'exact',
      network: SOLANA_DEVNET,
      asset: SPL_MINT,
      amount: '1000000',
      payTo: SOLANA_PAY_TO,
      maxTimeoutSeconds: 60,
      extra: { feePayer: FEE_PAYER },
    },
  ],
  '/cbbtc-then-usdc': [cbBtc, paymentRequirements({ amount: '10000' })],
  '/base-mainnet': [
    paymentRequirements({
      network: 'eip155:8453',
      amount: '10000',
      asset: BASE_USDC,
      extra: { name: 'USD Coin', version: '2' },
    }),
  ],
  '/sandbox': [paymentRequirements({ amount: '10000' })],
};

interface Payment {
  path: string;
  network: string;
  asset: string;
}

/** Runs `xx args…` from `cwd` with exactly `env` (plus PATH), stdin closed. */
function runXxIn(cwd: string, args: string[], env: Record<string, string>): Promise<XxRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [XX_BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('xx buy --self-custody: only the chain USDC, only the sandbox chain', function () {
  this.timeout(180_000);
  const servers = new LoopbackServers();
  const payments: Payment[] = [];
  let sellerUrl: string;
  let env: Record<string, string>;

  const seller: http.RequestListener = (req, res) => {
    req.resume();
    const pathName = (req.url ?? '/').split('?')[0]!;
    const accepts = OFFERS[pathName];
    if (!accepts) return void res.writeHead(404).end();
    const pay = req.headers['payment-signature'];
    if (typeof pay !== 'string') {
      const challenge = { x402Version: 2, resource: { url: `${sellerUrl}${pathName}` }, accepts };
      res.writeHead(402, {
        'payment-required': Buffer.from(JSON.stringify(challenge)).toString('base64'),
        'content-type': 'application/json',
      });
      return void res.end('{}');
    }
    const payload = JSON.parse(Buffer.from(pay, 'base64').toString('utf8'));
    payments.push({ path: pathName, network: payload.accepted.network, asset: payload.accepted.asset });
    const receipt = {
      success: true,
      transaction: `0x${'ab'.repeat(32)}`,
      network: payload.accepted.network,
      payer: payload.payload?.authorization?.from,
    };
    res.writeHead(200, {
      'content-type': 'text/plain',
      'payment-response': Buffer.from(JSON.stringify(receipt)).toString('base64'),
    });
    res.end('paid content\n');
  };

  before(async () => {
    sellerUrl = await servers.listen(seller);
    env = {
      ...xxHomeFor('buy-guards', API_URL, PASSPHRASE),
      XX_ENV: 'dev',
      XX_RPC_URL: 'http://127.0.0.1:9',
      XX_SOLANA_RPC_URL: 'http://127.0.0.1:9',
    };
    stdoutJson(await runXx(['wallet', 'import', '--json'], { ...env, XX_MNEMONIC: PHRASE }), 'wallet import');
  });
  after(() => servers.closeAll());

  it('a 402 naming another ERC-20 or SPL mint than USDC is not paid: NoCompatibleAcceptError, no payment header', async () => {
    const before = payments.length;
    for (const offer of ['/cbbtc', '/spl']) {
      const run = await runXx(['buy', `${sellerUrl}${offer}`, '--self-custody', '--max', '1.00', '--json'], env);
      assert.deepEqual([run.code, stderrJson(run, offer).error_code], [1, 'NoCompatibleAcceptError'], offer);
    }
    const named = await runXx(
      ['buy', `${sellerUrl}/cbbtc`, '--self-custody', '--network', 'base-sepolia', '--max', '1.00', '--json'],
      env,
    );
    assert.deepEqual([named.code, stderrJson(named, '--network').error_code], [1, 'NoCompatibleAcceptError']);
    assert.deepEqual(payments.slice(before), [], 'the seller received no payment header');
  });

  it('a 402 offering that token first and USDC second is paid in USDC', async () => {
    const before = payments.length;
    const out = stdoutJson(
      await runXx(['buy', `${sellerUrl}/cbbtc-then-usdc`, '--self-custody', '--max', '1.00', '--json'], env),
      'buy cbbtc-then-usdc',
    );
    assert.equal(out.paid, true);
    assert.deepEqual(payments.slice(before), [
      { path: '/cbbtc-then-usdc', network: 'eip155:84532', asset: BASE_SEPOLIA_USDC },
    ]);
  });

  describe('a .treasury/sandbox.json in the folder the command runs from (XX_ENV=dev)', () => {
    let folder: string;
    let cwdEnv: Record<string, string>;
    const writeSandbox = (fields: Record<string, unknown>, mode = 0o600) => {
      const file = path.join(folder, '.treasury', 'sandbox.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, JSON.stringify({ api_url: API_URL, ...fields }));
      fs.chmodSync(file, mode);
    };
    const xxHere = (args: string[]) => runXxIn(folder, args, cwdEnv);

    before(() => {
      folder = fileTempDir('xx-planted-');
      // No TREASURY_DATA_DIR: the CLI reads ./.treasury of its working directory.
      const { TREASURY_DATA_DIR: _dataDir, XX_RPC_URL: _rpc, ...rest } = env;
      cwdEnv = rest;
    });

    it('naming Base mainnet or a remote RPC: sandbox_chain_not_local, nothing paid on eip155:8453', async () => {
      const before = payments.length;
      const mainnet = { rpc_url: 'http://rpc.attacker.example', chain_id: 8453, usdc: BASE_USDC };
      const remoteRpc = { rpc_url: 'http://rpc.attacker.example', chain_id: 84532, usdc: BASE_SEPOLIA_USDC };
      for (const planted of [mainnet, remoteRpc]) {
        writeSandbox(planted);
        const buy = await xxHere([
          'buy',
          `${sellerUrl}/base-mainnet`,
          '--self-custody',
          '--network',
          'eip155:8453',
          '--max',
          '1.00',
          '--json',
        ]);
        const unnamed = await xxHere(['buy', `${sellerUrl}/base-mainnet`, '--self-custody', '--max', '1.00', '--json']);
        const balance = await xxHere(['wallet', 'balance', '--json']);
        for (const [what, run] of [
          ['buy --network eip155:8453', buy],
          ['buy', unnamed],
          ['wallet balance', balance],
        ] as const)
          assert.deepEqual(
            [run.code, stderrJson(run, what).error_code],
            [2, 'sandbox_chain_not_local'],
            `${what} (${planted.chain_id})`,
          );
      }
      assert.deepEqual(payments.slice(before), [], 'no payment header');
    });

    it('a group-writable one is sandbox_file_untrusted; the sandbox’s own (84532, loopback, 0600) pays there', async () => {
      const before = payments.length;
      const local = { rpc_url: 'http://127.0.0.1:9', chain_id: 84532, usdc: BASE_SEPOLIA_USDC };
      writeSandbox(local, 0o664);
      const shared = await xxHere(['buy', `${sellerUrl}/sandbox`, '--self-custody', '--max', '1.00', '--json']);
      assert.deepEqual([shared.code, stderrJson(shared, '0664').error_code], [2, 'sandbox_file_untrusted']);
      assert.deepEqual(payments.slice(before), []);

      writeSandbox(local, 0o600);
      const out = stdoutJson(
        await xxHere(['buy', `${sellerUrl}/sandbox`, '--self-custody', '--max', '1.00', '--json']),
        'the sandbox description',
      );
      assert.deepEqual([out.paid, out.network], [true, 'eip155:84532']);
      assert.deepEqual(payments.slice(before), [
        { path: '/sandbox', network: 'eip155:84532', asset: BASE_SEPOLIA_USDC },
      ]);
    });
  });
});

/**
 * `xx buy --self-custody` on Solana, the real `xx` binary against the offline chain (ops/solana/local-solana.ts)
 * and an official `@x402/express` + `@x402/svm` seller settled by its facilitator (../../unit/sdk/
 * solana-buyer-fixtures.ts); nothing faked:
 * - the keystore's Solana address is SLIP-0010 m/44'/501'/0'/0' (the known vector of the "abandon … about"
 *   phrase); the self-custody commands show it;
 * - a 402 offering only Solana is paid with the keystore's Solana key (no --network needed): balances move by
 *   exactly the price, the output names the network, the payer and the transaction's base58 signature;
 * - a 402 offering Base then Solana is paid on the network `--network` names (Solana; the Base entry's
 *   facilitator never asked); a network this keystore does not pay on here is refused before anything is signed;
 * - `--max` below the price and a wrong passphrase sign nothing;
 * - in the sandbox (sandbox.json naming the CLI's API URL) a Solana RPC off this machine is refused
 *   (`solana_rpc_not_loopback`, exit 2), whether sandbox.json or XX_SOLANA_RPC_URL names it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { address } from '@solana/kit';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import {
  PRICE_UNITS,
  SOLANA_DEVNET,
  startSolanaSeller,
  usdcOf,
  type SolanaSeller,
} from '../../unit/sdk/solana-buyer-fixtures.js';
import { sealMnemonic } from '../../../src/cli/commands/account/seed-keystore.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor, type XxRun } from './xx-process.js';

const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** The phrase's first Solana address at m/44'/501'/0'/0' (what Phantom and Solflare derive). */
const SOLANA_ADDRESS = address('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
const PASSPHRASE = 'correct horse battery';
/** Nothing answers here: self-custody payments never reach Treasury. */
const API_URL = 'http://127.0.0.1:9';

describe('xx buy --self-custody on Solana: the keystore Solana key pays an official @x402/svm seller', function () {
  this.timeout(180_000);
  let solana: LocalSolana;
  let seller: SolanaSeller;
  let env: Record<string, string>;
  const xx = (args: string[], extra: Record<string, string> = {}): Promise<XxRun> => runXx(args, { ...env, ...extra });
  const moved = async (): Promise<[bigint, bigint]> => [
    await usdcOf(solana, SOLANA_ADDRESS),
    await usdcOf(solana, seller.payTo),
  ];

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    seller = await startSolanaSeller(solana);
    env = { ...xxHomeFor('buy-solana', API_URL, PASSPHRASE), XX_SOLANA_RPC_URL: solana.rpcUrl };
    const imported = stdoutJson(await xx(['wallet', 'import', '--json'], { XX_MNEMONIC: PHRASE }), 'wallet import');
    assert.equal(imported.addresses.solana, SOLANA_ADDRESS, "SLIP-0010 m/44'/501'/0'/0'");
    await solana.faucet.fundUsdc(SOLANA_ADDRESS, 1_000_000n);
  });
  after(async () => {
    await seller?.close();
    await solana?.stop();
  });

  it('pays a Solana-only 402 with the keystore Solana key: exactly the price moves; the output names network, payer and signature', async () => {
    const [buyerBefore, payToBefore] = await moved();
    const out = stdoutJson(
      await xx(['buy', `${seller.url}/solana`, '--self-custody', '--max', '0.05', '--json']),
      'buy --self-custody (solana)',
    );
    assert.deepEqual([out.status, out.paid, out.network, out.body], [200, true, SOLANA_DEVNET, { paid: 'solana' }]);
    assert.equal(out.receipt.network, SOLANA_DEVNET);
    assert.equal(out.receipt.payer, SOLANA_ADDRESS);
    assert.equal(out.receipt.amount, '0.01');
    assert.match(out.receipt.txHash, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/, 'the base58 transaction signature');
    assert.deepEqual(await moved(), [buyerBefore - PRICE_UNITS, payToBefore + PRICE_UNITS]);
  });

  it('a 402 offering Base then Solana is paid on the network --network names; another network is refused first', async () => {
    const [buyerBefore, payToBefore] = await moved();
    const out = stdoutJson(
      await xx([
        'buy',
        `${seller.url}/both`,
        '--self-custody',
        '--network',
        'solana-devnet',
        '--max',
        '0.05',
        '--json',
      ]),
      'buy --network solana-devnet',
    );
    assert.deepEqual([out.status, out.network, out.receipt.payer], [200, SOLANA_DEVNET, SOLANA_ADDRESS]);
    assert.deepEqual(seller.evmFacilitatorCalls, [], 'the Base entry was not paid');
    assert.deepEqual(await moved(), [buyerBefore - PRICE_UNITS, payToBefore + PRICE_UNITS]);

    const mainnet = await xx(['buy', `${seller.url}/both`, '--self-custody', '--network', 'solana', '--json']);
    assert.deepEqual([mainnet.code, stderrJson(mainnet, 'mainnet').error_code], [2, 'network_not_local']);
    const unknown = await xx(['buy', `${seller.url}/both`, '--self-custody', '--network', 'solana-moon', '--json']);
    assert.deepEqual([unknown.code, stderrJson(unknown, 'unknown').error_code], [2, 'invalid_argument']);
    assert.deepEqual(await moved(), [buyerBefore - PRICE_UNITS, payToBefore + PRICE_UNITS]);
  });

  it('without --max the ceiling still holds (XX_BUY_MAX_USD here): refused, saying which ceiling, nothing signed', async () => {
    const before = await moved();
    const capped = await xx(['buy', `${seller.url}/solana`, '--self-custody', '--json'], { XX_BUY_MAX_USD: '0.001' });
    const err = stderrJson(capped, 'XX_BUY_MAX_USD');
    assert.deepEqual([capped.code, err.error_code], [1, 'InsufficientBudgetError']);
    assert.match(err.user_message, /XX_BUY_MAX_USD of 0\.001 USD.*--max/);
    assert.equal(err.details.ceiling_source, 'XX_BUY_MAX_USD');
    assert.equal(err.recovery.kind, 'raise_max_amount');
    assert.deepEqual(await moved(), before);
  });

  it('--max below the price and a wrong passphrase sign nothing', async () => {
    const before = await moved();
    const cheap = await xx(['buy', `${seller.url}/solana`, '--self-custody', '--max', '0.001', '--json']);
    assert.deepEqual([cheap.code, stderrJson(cheap, '--max').error_code], [1, 'InsufficientBudgetError']);
    const wrong = await xx(['buy', `${seller.url}/solana`, '--self-custody', '--json'], {
      XX_KEYSTORE_PASSPHRASE: 'not the passphrase',
    });
    assert.deepEqual([wrong.code, stderrJson(wrong, 'wrong passphrase').error_code], [1, 'wrong_passphrase']);
    assert.deepEqual(await moved(), before);
  });

  it('a keystore with a Solana key only: wallet balance reads its USDC on Solana, buy pays with it without --network', async () => {
    const saved = process.env.XX_KEYSTORE_SCRYPT_LOG_N;
    process.env.XX_KEYSTORE_SCRYPT_LOG_N = '10';
    try {
      const sealed = await sealMnemonic(PHRASE, PASSPHRASE, 'solonly', { solana: SOLANA_ADDRESS });
      fs.mkdirSync(env.XX_SEEDS_DIR!, { recursive: true });
      fs.writeFileSync(path.join(env.XX_SEEDS_DIR!, 'solonly.json'), JSON.stringify(sealed), { mode: 0o600 });
    } finally {
      if (saved === undefined) delete process.env.XX_KEYSTORE_SCRYPT_LOG_N;
      else process.env.XX_KEYSTORE_SCRYPT_LOG_N = saved;
    }
    const [buyerBefore, payToBefore] = await moved();
    const balance = stdoutJson(await xx(['wallet', 'balance', 'solonly', '--json']), 'wallet balance solonly');
    assert.deepEqual(
      [balance.custody, balance.address, balance.network, balance.asset, balance.balance_raw],
      ['self', SOLANA_ADDRESS, SOLANA_DEVNET, solana.mint, buyerBefore.toString()],
    );
    const out = stdoutJson(
      await xx(['buy', `${seller.url}/both`, '--self-custody', '--keystore', 'solonly', '--max', '0.05', '--json']),
      'buy --keystore solonly',
    );
    assert.deepEqual([out.network, out.receipt.payer], [SOLANA_DEVNET, SOLANA_ADDRESS]);
    assert.deepEqual(await moved(), [buyerBefore - PRICE_UNITS, payToBefore + PRICE_UNITS]);
    const base = await xx([
      'buy',
      `${seller.url}/both`,
      '--self-custody',
      '--keystore',
      'solonly',
      '--network',
      'base-sepolia',
      '--json',
    ]);
    assert.deepEqual([base.code, stderrJson(base, 'base on solonly').error_code], [1, 'no_base_address']);
  });

  it('in the sandbox a Solana RPC off this machine is refused (solana_rpc_not_loopback), from sandbox.json or XX_SOLANA_RPC_URL', async () => {
    const dataDir = env.TREASURY_DATA_DIR!;
    fs.mkdirSync(dataDir, { recursive: true });
    const sandboxFile = path.join(dataDir, 'sandbox.json');
    const before = await moved();
    try {
      fs.writeFileSync(sandboxFile, JSON.stringify({ api_url: API_URL, solana_rpc_url: 'http://10.1.2.3:8899' }), {
        mode: 0o600,
      });
      const fromFile = await xx(['buy', `${seller.url}/solana`, '--self-custody', '--json'], { XX_SOLANA_RPC_URL: '' });
      assert.deepEqual(
        [fromFile.code, stderrJson(fromFile, 'sandbox.json').error_code],
        [2, 'solana_rpc_not_loopback'],
      );
      fs.writeFileSync(sandboxFile, JSON.stringify({ api_url: API_URL, solana_rpc_url: solana.rpcUrl }), {
        mode: 0o600,
      });
      const fromEnv = await xx(['buy', `${seller.url}/solana`, '--self-custody', '--json'], {
        XX_SOLANA_RPC_URL: 'https://api.devnet.solana.com',
      });
      assert.deepEqual([fromEnv.code, stderrJson(fromEnv, 'env').error_code], [2, 'solana_rpc_not_loopback']);
      assert.deepEqual(await moved(), before);
      // The sandbox's own loopback RPC pays.
      const paid = stdoutJson(
        await xx(['buy', `${seller.url}/solana`, '--self-custody', '--json'], { XX_SOLANA_RPC_URL: '' }),
        'sandbox rpc',
      );
      assert.equal(paid.network, SOLANA_DEVNET);
      assert.deepEqual(await moved(), [before[0] - PRICE_UNITS, before[1] + PRICE_UNITS]);
    } finally {
      fs.rmSync(sandboxFile, { force: true });
    }
  });
});

/**
 * Self-custody payments end to end against the sandbox of `npm start` (anvil with the test USDC, the
 * official-package facilitator, the faucet, the demo seller's `GET /joke` at 0.01 USDC), nothing faked:
 * - the real `xx` binary: `init` → `wallet balance` (0) → `fund --testnet --self-custody` → `buy <demo seller>
 *   --self-custody --max 0.05` pays from the keystore's Base address (the BIP44 address init printed), with
 *   the same `--json` keys as a managed payment; the on-chain balance (read apart from the CLI) drops by
 *   exactly the price and the seller's pay-to gains it; a price above `--max` is refused before the keystore
 *   is opened (even with a wrong passphrase the error is the budget's); a wrong passphrase is exit 1
 *   `wrong_passphrase` and nothing moves; an unfunded keystore is `insufficient_funds` with the
 *   `fund_wallet` recovery naming the local address and `xx fund --testnet --self-custody --keystore …`;
 *   the passphrase asked for on a terminal (script(1)) pays too; nothing secret (phrase, key, passphrase)
 *   is in any file of the CLI home but the sealed keystore, nor in any output, and a payment writes no file;
 * - the buyer SDK: `createX402Buyer({ account })` with a local viem account pays the demo seller, and the
 *   official `@x402/fetch` client pays it with the same account; each moves exactly the price.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { x402Client } from '@x402/core/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient, erc20Abi, getAddress, http, toHex, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createX402Buyer } from 'treasury/sdk';
import { keystoreSchema, openMnemonic } from '../../src/cli/commands/account/seed-keystore.js';
import { CLI_PASSPHRASE, sandboxCliEnv, startSandbox, type RunningSandbox } from '../support/sandbox-harness.js';
import {
  filesUnder,
  hasScript,
  runXx,
  runXxOnTty,
  stderrJson,
  stdoutJson,
  type XxRun,
} from '../integration/cli/xx-process.js';

const PASSPHRASE = CLI_PASSPHRASE;
const PRICE_RAW = 10_000n; // the demo seller's 0.01 USDC

describe('self-custody payments: xx buy --self-custody and createX402Buyer({ account }) against the sandbox', function () {
  this.timeout(300_000);
  let sandbox: RunningSandbox;
  let env: Record<string, string>;
  let home: string;
  let balanceOf: (address: Address) => Promise<bigint>;
  let payTo: Address;
  const outputs: string[] = [];
  const xx = async (args: string[], extra: Record<string, string> = {}): Promise<XxRun> => {
    const run = await runXx(args, { ...env, ...extra });
    outputs.push(run.stdout, run.stderr);
    return run;
  };

  before(async () => {
    sandbox = await startSandbox();
    env = sandboxCliEnv(sandbox, 'self-custody');
    home = env.HOME!;
    const chain = createPublicClient({ transport: http(sandbox.info.rpc_url) });
    balanceOf = (address) =>
      chain.readContract({
        address: getAddress(sandbox.info.usdc),
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [address],
      });
    // The demo seller's buyers pay the collection wallet Treasury holds for it (docs/adr/0011-merchant-of-record.md).
    payTo = getAddress(
      (JSON.parse(fs.readFileSync(sandbox.sandboxFile, 'utf8')) as { demo_seller_collect_to: string })
        .demo_seller_collect_to,
    );
  });
  after(async () => {
    await sandbox?.stop();
  });

  it('xx: init → fund the keystore address → buy --self-custody pays exactly the price; --max, a wrong passphrase and a short balance sign nothing', async () => {
    const demo = sandbox.info.demo_seller_url;
    const init = stdoutJson(await xx(['init', '--server', sandbox.info.api_url, '--json']), 'init');
    const local = getAddress(init.addresses.base as string);
    const mnemonic = await openMnemonic(
      keystoreSchema.parse(JSON.parse(fs.readFileSync(init.keystore, 'utf8'))),
      PASSPHRASE,
    );
    const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/60'/0'/0/0`);
    const privateKey = toHex(key.privateKey!);
    assert.equal(privateKeyToAccount(privateKey).address, local, 'init prints the BIP44 Base address');
    assert.notEqual(local, getAddress(init.wallets[0].address), 'the local address is not the managed wallet');

    const empty = stdoutJson(await xx(['wallet', 'balance', '--json']), 'wallet balance');
    assert.deepEqual(
      [empty.custody, empty.keystore, empty.address, empty.network, empty.balance_raw],
      ['self', 'default', local, `eip155:${sandbox.info.chain_id}`, '0'],
    );
    const funded = stdoutJson(
      await xx(['fund', '--testnet', '--self-custody', '--amount', '1', '--json']),
      'fund --self-custody',
    );
    assert.deepEqual([funded.funded, funded.address], [true, local]);
    assert.equal(await balanceOf(local), 1_000_000n);
    assert.equal(
      stdoutJson(await xx(['wallet', 'balance', 'default', '--json']), 'wallet balance default').balance_usd,
      '1',
    );

    // A managed wallet id in the name's place reads that Treasury wallet (the API, the agent's PAT).
    const managed = stdoutJson(await xx(['wallet', 'balance', init.wallets[0].id, '--json']), 'wallet balance wal_…');
    assert.deepEqual(
      [managed.custody, managed.wallet_id, getAddress(managed.address)],
      ['managed', init.wallets[0].id, getAddress(init.wallets[0].address)],
    );
    const missing = await xx(['wallet', 'balance', 'nosuch', '--json']);
    assert.deepEqual(
      [missing.code, stderrJson(missing, 'wallet balance nosuch').error_code],
      [1, 'keystore_not_found'],
    );

    const filesBefore = filesUnder(env.XX_HOME!).map((f) => [f, fs.readFileSync(f, 'utf8')] as const);

    // Above --max: refused before the keystore is opened — with a wrong passphrase the error is still the budget's.
    const tooDear = await xx(['buy', demo, '--self-custody', '--max', '0.005', '--json'], {
      XX_KEYSTORE_PASSPHRASE: 'not the passphrase',
    });
    assert.equal(tooDear.code, 1);
    assert.deepEqual(
      [stderrJson(tooDear, 'buy').error_code, stderrJson(tooDear, 'buy').details],
      ['InsufficientBudgetError', { requested_usd: '0.01', cap_usd: '0.005' }],
    );
    // A wrong passphrase: exit 1, a clear message, nothing signed, nothing moved.
    const wrong = await xx(['buy', demo, '--self-custody', '--max', '0.05', '--json'], {
      XX_KEYSTORE_PASSPHRASE: 'not the passphrase',
    });
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.equal(stderrJson(wrong, 'buy').error_code, 'wrong_passphrase');
    assert.match(stderrJson(wrong, 'buy').user_message, /wrong passphrase/);
    assert.equal(wrong.stdout, '');
    assert.equal(await balanceOf(local), 1_000_000n, 'nothing moved');

    const sellerBefore = await balanceOf(payTo);
    const bought = stdoutJson(
      await xx(['buy', demo, '--self-custody', '--max', '0.05', '--json']),
      'buy --self-custody',
    );
    assert.deepEqual(
      Object.keys(bought),
      ['status', 'paid', 'network', 'body', 'receipt'],
      'the --json shape of a managed payment',
    );
    assert.deepEqual(
      [bought.status, bought.paid, bought.network, bought.receipt.amount],
      [200, true, `eip155:${sandbox.info.chain_id}`, '0.01'],
    );
    assert.equal(getAddress(bought.receipt.payer), local);
    assert.match(bought.receipt.txHash, /^0x[0-9a-f]{64}$/);
    assert.equal(await balanceOf(local), 1_000_000n - PRICE_RAW, 'the local balance drops by exactly the price');
    assert.equal(await balanceOf(payTo), sellerBefore + PRICE_RAW);
    assert.equal(
      stdoutJson(await xx(['wallet', 'balance', '--json']), 'wallet balance').balance_raw,
      String(1_000_000n - PRICE_RAW),
    );

    // The same payment in text mode names the local address.
    const text = await xx(['buy', demo, '--self-custody']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stderr, new RegExp(`Paid 0\\.01 USD from ${local}`));
    assert.equal(await balanceOf(local), 1_000_000n - 2n * PRICE_RAW);

    // An unfunded keystore: the seller's refusal becomes insufficient_funds naming the local address.
    const poor = stdoutJson(await xx(['wallet', 'generate', '--name', 'poor', '--json']), 'wallet generate');
    const short = await xx(['buy', demo, '--self-custody', '--keystore', 'poor', '--max', '0.05', '--json']);
    assert.equal(short.code, 1, short.stderr);
    const e = stderrJson(short, 'buy (unfunded)');
    assert.equal(e.error_code, 'insufficient_funds');
    assert.equal(getAddress(e.details.address), getAddress(poor.addresses.base));
    assert.equal(e.details.keystore, 'poor');
    assert.deepEqual(
      [e.recovery.kind, e.recovery.chain, e.recovery.shortfall_usd, e.recovery.cli_command],
      ['fund_wallet', `eip155:${sandbox.info.chain_id}`, '0.01', 'xx fund --testnet --self-custody --keystore poor'],
    );
    assert.match(e.recovery.deposit_uri, new RegExp(`address=${getAddress(poor.addresses.base)}&uint256=10000$`));

    // Flags that do not go together are exit 2.
    assert.equal((await xx(['buy', demo, '--self-custody', '--wallet', init.wallets[0].id, '--json'])).code, 2);
    assert.equal((await xx(['buy', demo, '--keystore', 'poor', '--json'])).code, 2);

    // Nothing secret on disk but the sealed keystore; the payments changed no file, and of the purchases they
    // kept (docs/cli.md, "xx buy: purchases") only the refused one is left, for a retry: the paid ones are gone.
    const secrets = [mnemonic, mnemonic.split(' ').slice(0, 4).join(' '), privateKey, privateKey.slice(2), PASSPHRASE];
    const purchaseDir = `${path.sep}purchases${path.sep}`;
    const filesAfter = filesUnder(env.XX_HOME!).filter((f) => !f.endsWith(`${path.sep}poor.json`));
    assert.equal(filesAfter.filter((f) => f.includes(purchaseDir)).length, 1, 'only the refused purchase is kept');
    assert.deepEqual(
      filesAfter.filter((f) => !f.includes(purchaseDir)).map((f) => [f, fs.readFileSync(f, 'utf8')]),
      filesBefore,
      'buy --self-custody writes nothing else',
    );
    for (const file of filesUnder(home)) {
      const text = fs.readFileSync(file, 'utf8');
      for (const s of secrets) assert.ok(!text.toLowerCase().includes(s.toLowerCase()), `${file} holds no secret`);
    }
    for (const out of outputs)
      for (const s of secrets) assert.ok(!out.toLowerCase().includes(s.toLowerCase()), 'no secret printed');
  });

  it('xx: the passphrase asked for on a terminal pays (script(1))', async function () {
    if (!hasScript()) this.skip();
    const local = getAddress(stdoutJson(await xx(['wallet', 'balance', '--json']), 'wallet balance').address);
    const before = await balanceOf(local);
    const ttyEnv: Record<string, string> = { ...env };
    delete ttyEnv.XX_KEYSTORE_PASSPHRASE;
    const tty = runXxOnTty(['buy', sandbox.info.demo_seller_url, '--self-custody', '--max', '0.05'], ttyEnv);
    await tty.answer(/Passphrase of the keystore "default"/, PASSPHRASE);
    assert.equal(await tty.exit, 0, tty.screen);
    assert.ok(!tty.screen.includes(PASSPHRASE), 'the passphrase is not echoed');
    assert.match(tty.screen, /Paid 0\.01 USD from/);
    assert.equal(await balanceOf(local), before - PRICE_RAW);
    // Without a terminal and without XX_KEYSTORE_PASSPHRASE: exit 2 naming the variable.
    const noTty = await runXx(['buy', sandbox.info.demo_seller_url, '--self-custody', '--json'], ttyEnv);
    assert.equal(noTty.code, 2);
    assert.equal(stderrJson(noTty, 'buy').details.flag, 'XX_KEYSTORE_PASSPHRASE');
  });

  it('SDK: createX402Buyer({ account }) and the official @x402/fetch client pay the demo seller with the same local account', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const faucet = await fetch(sandbox.info.faucet_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: account.address, amount_usd: '1' }),
    });
    assert.equal(faucet.status, 200, await faucet.clone().text());
    const network = `eip155:${sandbox.info.chain_id}`;

    const buyer = createX402Buyer({ account, network, rpcUrl: sandbox.info.rpc_url, maxPriceUsd: '0.05' });
    const result = await buyer.request(sandbox.info.demo_seller_url);
    assert.deepEqual([result.status, result.paid, result.payment], [200, true, undefined]);
    assert.equal(getAddress(result.receipt!.payer!), account.address);
    assert.equal(result.localPayment!.payer, account.address);
    assert.equal(await balanceOf(account.address), 1_000_000n - PRICE_RAW);

    const client = new x402Client().register(network as `${string}:${string}`, new ExactEvmScheme(account));
    const paid = await wrapFetchWithPayment(fetch, client)(sandbox.info.demo_seller_url);
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.equal(await balanceOf(account.address), 1_000_000n - 2n * PRICE_RAW);
  });
});

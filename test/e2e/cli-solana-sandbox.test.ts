/**
 * The `xx` binary against `npm start` with its offline Solana chain: `xx init` → `xx agent wallets add --chain
 * solana` (sent as solana-devnet: a base58 managed wallet) → `xx fund --testnet --chain solana` (the sandbox's
 * Solana faucet, USDC to the wallet's token account) → `xx wallet balance <wal_…>` reads that USDC through the
 * API; the wallet pays the sandbox's official Solana seller (POST /v1/wallets/{id}/pay → the wire transaction
 * → the seller settles through its facilitator), and `xx history` names the network and the base58 payee.
 * Base58 is never case-folded anywhere on the way.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { sandboxCliEnv, startSandbox, type RunningSandbox } from '../support/sandbox-harness.js';
import { assertOk, runXx, stdoutJson } from '../integration/cli/xx-process.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** The Solana demo seller paid from a Treasury wallet as a buyer does: challenge → Treasury signs → paid retry. */
async function paySolanaSeller(info: RunningSandbox['info'], walletId: string, pat: string): Promise<Response> {
  const challenge = await fetch(info.solana_demo_seller_url!);
  assert.equal(challenge.status, 402);
  const required = decodePaymentRequiredHeader(challenge.headers.get('payment-required')!);
  const accepted = required.accepts[0]!;
  assert.equal(accepted.network, DEVNET);
  const signed = await fetch(`${info.api_url}/v1/wallets/${walletId}/pay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
    body: JSON.stringify({ payment_requirements: accepted }),
  });
  assert.equal(signed.status, 200, await signed.clone().text());
  const { transaction } = (await signed.json()) as { transaction: string };
  const header = encodePaymentSignatureHeader({
    x402Version: 2,
    resource: required.resource,
    accepted,
    payload: { transaction },
  });
  return fetch(info.solana_demo_seller_url!, { headers: { 'payment-signature': header } });
}

describe('xx with the sandbox Solana chain (real binary, API, signer, offline chain)', function () {
  this.timeout(300_000);
  let sandbox: RunningSandbox;

  before(async () => {
    sandbox = await startSandbox({ TREASURY_SANDBOX_CHAIN: '0' });
  });
  after(async () => {
    await sandbox?.stop();
    if (sandbox) fs.rmSync(sandbox.dataDir, { recursive: true, force: true });
  });

  it('wallets add --chain solana → fund --testnet --chain solana → wallet balance shows the USDC; history names the network', async () => {
    const env = sandboxCliEnv(sandbox, 'solana-buyer');
    const xx = (args: string[]) => runXx(args, env);
    const init = stdoutJson(await xx(['init', '--server', sandbox.info.api_url, '--label', 'sol', '--json']), 'init');

    const added = stdoutJson(await xx(['agent', 'wallets', 'add', '--chain', 'solana', '--json']), 'wallets add');
    assert.deepEqual([added.chain, added.network], ['solana-devnet', DEVNET]);
    assert.match(added.address, BASE58);
    const listed = assertOk(await xx(['agent', 'wallets', 'list']), 'wallets list');
    assert.ok(listed.stdout.includes(added.address), listed.stdout);

    const funded = stdoutJson(await xx(['fund', '--testnet', '--chain', 'solana', '--amount', '3', '--json']), 'fund');
    assert.deepEqual(
      [funded.funded, funded.wallet_id, funded.address, funded.network, funded.balance_raw],
      [true, added.id, added.address, DEVNET, '3000000'],
    );

    const balance = stdoutJson(await xx(['wallet', 'balance', added.id, '--json']), 'wallet balance');
    assert.deepEqual(
      [balance.address, balance.network, balance.balance_usd, balance.asset],
      [added.address, DEVNET, '3', sandbox.info.solana_usdc_mint],
    );
    const shown = assertOk(await xx(['wallet', 'balance', added.id]), 'wallet balance (text)');
    assert.ok(shown.stdout.includes(`${added.address}: 3 USDC on solana-devnet`), shown.stdout);

    // The wallet pays the official Solana seller; the payment is in the agent's history under its network.
    const record = JSON.parse(fs.readFileSync(path.join(env.XX_HOME!, 'agents', `${init.agent_id}.json`), 'utf8')) as {
      pat: string;
    };
    const paid = await paySolanaSeller(sandbox.info, added.id, record.pat);
    assert.equal(paid.status, 200, await paid.clone().text());
    assert.equal(decodePaymentResponseHeader(paid.headers.get('payment-response')!).success, true);
    const after = stdoutJson(await xx(['wallet', 'balance', added.id, '--json']), 'wallet balance after');
    assert.equal(after.balance_usd, '2.99');
    const history = stdoutJson(await xx(['history', '--json']), 'history');
    const payment = history.payments.find((p: { wallet_id: string }) => p.wallet_id === added.id);
    assert.deepEqual([payment?.network, payment?.payee], [DEVNET, sandbox.info.solana_demo_seller_pay_to]);
    const table = assertOk(await xx(['history']), 'history (text)');
    assert.ok(table.stdout.includes('solana-devnet'), table.stdout);
    assert.ok(table.stdout.includes(sandbox.info.solana_demo_seller_pay_to!), table.stdout);
  });
});

/**
 * The owner signs a Solana wallet's policy from the `xx` CLI — the real binary against a real test Treasury (HTTP,
 * PostgreSQL, SoftHSM, the signer with its own policy store) serving the offline Solana chain: `xx wallet policy
 * set` signs the document naming the wallet's base58 address with the seed's key, the signer holds it owner-signed,
 * (`xx agent wallets add --chain solana-devnet` made the wallet), and a Solana payment above it is refused by the signer even after the API's own copy of the policy is loosened
 * in its database (a compromised API).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { runXx, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

describe('xx: an owner-signed policy of a Solana wallet (CLI subprocess, HTTP, SoftHSM, signer policy store, offline Solana chain)', function () {
  this.timeout(240_000);
  let solana: LocalSolana;
  // Filled in before the Treasury starts (the hooks run in the order they are registered).
  const serverEnv: Record<string, string> = { TREASURY_AUTH_CACHE_MS: '0', TREASURY_RPC_TIMEOUT_MS: '20000' };
  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    serverEnv.TREASURY_SOLANA_RPC_URL = solana.rpcUrl;
  });
  after(async () => {
    await solana?.stop();
  });
  const { t, forwarder } = useForwardedTreasury(serverEnv);

  it('wallet policy set signs the Solana wallet’s policy with the seed; the signer refuses a payment above it', async () => {
    const env = xxHomeFor('solana-owner-signed', forwarder.url, PASSPHRASE);
    const init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'both', '--json'], env), 'init');
    const pat = (
      JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${init.agent_id}.json`), 'utf8')) as {
        pat: string;
      }
    ).pat;
    const added = stdoutJson(
      await runXx(['agent', 'wallets', 'add', '--chain', 'solana-devnet', '--json'], env),
      'agent wallets add',
    );
    const wallet = (added.wallet ?? added) as { id: string; address: string };
    assert.match(wallet.address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, JSON.stringify(added));
    await solana.faucet.fundUsdc(wallet.address as Address, 10_000_000n);

    const set = stdoutJson(
      await runXx(['wallet', 'policy', 'set', wallet.id, '--max-per-payment', '1', '--json'], env),
      'wallet policy set',
    );
    assert.equal(set.address, wallet.address);
    assert.equal(set.policy.per_tx_cap_usd, '1');
    assert.deepEqual([set.owner_policy.state, set.owner_policy.version], ['owner_signed', 1]);
    assert.equal(set.owner_policy.authority.address.toLowerCase(), init.addresses.base.toLowerCase());

    const payTo = (await generateKeyPairSigner()).address;
    const pay = (usd: number) =>
      t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: pat,
        body: {
          payment_requirements: {
            scheme: 'exact',
            network: DEVNET,
            asset: solana.mint,
            amount: String(Math.round(usd * 1e6)),
            payTo,
            maxTimeoutSeconds: 60,
            extra: { feePayer: solana.feePayer },
          },
        },
      });
    assert.equal((await pay(0.5)).status, 200);
    // A compromised API: its copy of the policy loosened to nothing. The signer still refuses 1.5 USD.
    await t.db.knex('wallets').where({ id: wallet.id }).update({ policy: {} });
    t.app.services.pay.forgetWallet(wallet.id);
    const refused = await pay(1.5);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.decided_by], ['policy_denied', 'signer']);
  });
});

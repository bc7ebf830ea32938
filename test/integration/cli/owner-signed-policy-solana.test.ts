/**
 * The owner signs a Solana wallet's policy from the `xx` CLI — the real binary against a real test Treasury (HTTP,
 * PostgreSQL, SoftHSM, the signer with its own policy store) serving the offline Solana chain: `xx wallet policy
 * set` signs the document naming the wallet's base58 address with the seed's key, the signer holds it owner-signed,
 * (`xx agent wallets add --chain solana-devnet` made the wallet), and a Solana payment above it is refused by the signer even after the API's own copy of the policy is loosened
 * in its database (a compromised API). An owner who signed in with Solana (`xx init --chain solana`) signs it as
 * the Ed25519 statement with the seed's Solana key, which the signer recorded as the authority.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { assertOk, runXx, stdoutJson, xxHomeFor } from './xx-process.js';
import { SOLANA_DEVNET, solanaPaymentRequirements } from '../../builders/payment-requirements.js';

const PASSPHRASE = 'correct horse battery staple';

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

  /** The agent PAT `xx init` stored (the agent record holds it). */
  const agentPat = (env: Record<string, string>, agentId: string): string =>
    (JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${agentId}.json`), 'utf8')) as { pat: string }).pat;

  /** `xx init` on a new seed with `chain`, then a funded Solana wallet added with `xx agent wallets add`. */
  async function initWithSolanaWallet(name: string, chain: 'both' | 'solana') {
    const env = xxHomeFor(name, forwarder.url, PASSPHRASE);
    const init = stdoutJson(await runXx(['init', '--new-seed', '--chain', chain, '--json'], env), 'init');
    const addedText = assertOk(
      await runXx(['agent', 'wallets', 'add', '--chain', 'solana-devnet'], env),
      'wallets add',
    );
    const wallet = (
      stdoutJson(await runXx(['agent', 'wallets', 'list', '--json'], env), 'wallets list').wallets as Array<{
        id: string;
        address: string;
        network: string;
        policy_state: string;
      }>
    ).find((w) => w.network === SOLANA_DEVNET)!;
    assert.match(wallet.address, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    // Made with the agent's credentials, which cannot sign its policy: the output says how the owner does.
    assert.equal(wallet.policy_state, 'ceilings_only');
    assert.ok(
      addedText.stdout.includes(`Its policy is not owner-signed`) &&
        addedText.stdout.includes(`\`xx wallet policy set ${wallet.id} --file <policy.json>\``),
      addedText.stdout,
    );
    await solana.faucet.fundUsdc(wallet.address as Address, 10_000_000n);
    return { env, init, wallet, pat: agentPat(env, init.agent_id) };
  }

  /** A Solana payment of `usd` from the wallet with the agent's PAT. */
  async function pay(pat: string, walletId: string, usd: number) {
    return t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: {
        payment_requirements: solanaPaymentRequirements(
          solana,
          String(Math.round(usd * 1e6)),
          (await generateKeyPairSigner()).address,
        ),
      },
    });
  }

  /** Pays within the signed cap, loosens the API's copy of the policy, and expects the signer to refuse above it. */
  async function expectSignerHolds(pat: string, walletId: string) {
    assert.equal((await pay(pat, walletId, 0.5)).status, 200);
    // A compromised API: its copy of the policy loosened to nothing. The signer still refuses 1.5 USD.
    await t.db.knex('wallets').where({ id: walletId }).update({ policy: {} });
    t.app.services.pay.forgetWallet(walletId);
    const refused = await pay(pat, walletId, 1.5);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.decided_by], ['policy_denied', 'signer']);
  }

  const setCap = (env: Record<string, string>, walletId: string) =>
    runXx(['wallet', 'policy', 'set', walletId, '--max-per-payment', '1', '--json'], env).then((run) =>
      stdoutJson(run, 'wallet policy set'),
    );

  it('wallet policy set signs the Solana wallet’s policy with the seed; the signer refuses a payment above it', async () => {
    const { env, init, wallet, pat } = await initWithSolanaWallet('solana-owner-signed', 'both');
    const set = await setCap(env, wallet.id);
    assert.equal(set.address, wallet.address);
    assert.equal(set.policy.per_tx_cap_usd, '1');
    assert.deepEqual([set.owner_policy.state, set.owner_policy.version], ['owner_signed', 1]);
    assert.equal(set.owner_policy.authority.address.toLowerCase(), init.addresses.base.toLowerCase());
    await expectSignerHolds(pat, wallet.id);
  });

  it("an owner who signed in with Solana signs with the seed's Solana key (the Ed25519 statement)", async () => {
    const { env, init, wallet, pat } = await initWithSolanaWallet('siws-owner-signed', 'solana');
    const set = await setCap(env, wallet.id);
    assert.deepEqual(set.owner_policy.authority, { kind: 'owner', address: init.addresses.solana });
    assert.deepEqual([set.owner_policy.state, set.owner_policy.version], ['owner_signed', 1]);
    const audit = await t.db.knex('audit_events').where({ chain_key: wallet.id, event_type: 'policy.signed' }).first();
    assert.match(audit?.payload.signature, /^0x[0-9a-f]{128}$/, 'a 64-byte Ed25519 signature');
    await expectSignerHolds(pat, wallet.id);
  });
});

/**
 * The owner signs a wallet's policy from the `xx` CLI — the real binary against a real test Treasury (HTTP,
 * PostgreSQL, SoftHSM, the signer with its own policy store):
 * - `xx init` signs the policy it gives the new wallet (version 1) with the seed's Base key: the signer holds
 *   it owner-signed by that address, whoami says so, and a payment above it is refused by the signer even
 *   after the API's own copy of the policy is loosened in its database (a compromised API);
 * - `xx wallet policy show` prints the policy and who signed it; `xx wallet policy set` signs the next
 *   version with the seed and the signer enforces the new limits; the Treasury PAT it used is revoked;
 * - a bad flag exits 2 before anything is signed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { assertOk, runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';

describe('xx: owner-signed policies (CLI subprocess, HTTP, PostgreSQL, SoftHSM, signer policy store)', function () {
  this.timeout(240_000);
  const { t, forwarder } = useForwardedTreasury({ TREASURY_AUTH_CACHE_MS: '0' });
  const home = (name: string) => xxHomeFor(name, forwarder.url, PASSPHRASE);

  /** A payment of `usd` from the wallet with the agent's PAT (USDC has 6 decimals). */
  const pay = (pat: string, walletId: string, usd: number) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: pat,
      body: { payment_requirements: paymentRequirements({ amount: String(Math.round(usd * 1e6)) }) },
    });

  /** The agent PAT `xx init` stored (the agent record holds it). */
  const agentPat = (env: Record<string, string>, agentId: string): string =>
    (JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${agentId}.json`), 'utf8')) as { pat: string }).pat;

  let env: ReturnType<typeof home>;
  let init: any;

  before(async () => {
    env = home('owner-signed');
    init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
  });

  it('init signs the first policy (version 1) with the seed; the signer enforces it over a loosened API copy', async () => {
    assert.equal(init.wallet_policy_signing_error, null);
    const { kind, address } = init.wallet_owner_policy.authority;
    assert.deepEqual([kind, address.toLowerCase()], ['owner', init.addresses.base.toLowerCase()]);
    assert.deepEqual([init.wallet_owner_policy.state, init.wallet_owner_policy.version], ['owner_signed', 1]);
    const text = assertOk(await runXx(['whoami'], env), 'whoami');
    assert.match(text.stdout, new RegExp(`wallet: +${init.wallets[0].id} \\S+ owner_signed`));
    const who = stdoutJson(await runXx(['whoami', '--json'], env), 'whoami --json');
    assert.equal(who.policy_state, 'owner_signed', 'the API says so of every wallet the agent reaches');
    assert.deepEqual(
      who.wallets.map((w: { policy_state: string }) => w.policy_state),
      ['owner_signed'],
    );

    // A compromised API: its copy of the policy loosened to nothing. The signer still refuses 1.5 USD.
    const walletId: string = init.wallets[0].id;
    const { policy: signed } = await t.db.knex('wallets').where({ id: walletId }).first('policy');
    await t.db.knex('wallets').where({ id: walletId }).update({ policy: {} });
    const refused = await pay(agentPat(env, init.agent_id), walletId, 1.5);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.deepEqual([refused.body.error_code, refused.body.decided_by], ['policy_denied', 'signer']);
    assert.match(refused.body.decision_id, /^pd_/);
    // The copy put back as signed: `wallet policy set` below builds on it (a rewritten one it refuses).
    await t.db.knex('wallets').where({ id: walletId }).update({ policy: signed });
  });

  it('wallet policy show and set: the next version signed with the seed, enforced by the signer', async () => {
    const walletId: string = init.wallets[0].id;
    const shown = stdoutJson(await runXx(['wallet', 'policy', 'show', '--json'], env), 'wallet policy show');
    assert.equal(shown.wallet_id, walletId);
    assert.deepEqual([shown.owner_policy.state, shown.owner_policy.next_version], ['owner_signed', 2]);
    const shownText = assertOk(await runXx(['wallet', 'policy', 'show', walletId], env), 'wallet policy show (text)');
    assert.match(shownText.stdout, new RegExp(`Owner-signed by ${init.addresses.base} \\(version 1\\)`));

    const set = stdoutJson(
      await runXx(
        ['wallet', 'policy', 'set', walletId, '--max-per-payment', '2', '--daily-limit', '20', '--json'],
        env,
      ),
      'wallet policy set',
    );
    assert.deepEqual(set.policy, { per_tx_cap_usd: '2', daily_cap_usd: '20' });
    assert.deepEqual([set.owner_policy.state, set.owner_policy.version], ['owner_signed', 2]);
    assert.equal(set.owner_policy.authority.address.toLowerCase(), init.addresses.base.toLowerCase());

    const pat = agentPat(env, init.agent_id);
    assert.equal((await pay(pat, walletId, 1.5)).status, 200, 'under the new per-payment cap');
    // Loosened again in the API's database: the signer holds version 2 and refuses 2.5 USD.
    await t.db.knex('wallets').where({ id: walletId }).update({ policy: {} });
    const refused = await pay(pat, walletId, 2.5);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.decided_by, 'signer');

    // The Treasury PATs the owner's session minted to sign are revoked.
    const minted = await t.db.knex('api_tokens').where({ label: 'xx owner-signed policy' }).select('revoked_at');
    assert.equal(minted.length, 2, 'one for init, one for set');
    assert.ok(minted.every((r) => r.revoked_at !== null));
  });

  it('a bad flag exits 2 naming it, and nothing is signed', async () => {
    const before = await runXx(['wallet', 'policy', 'show', '--json'], env);
    for (const [args, flag] of [
      [['--max-per-payment', 'ten'], '--max-per-payment'],
      [[], '--file'],
      [['--file', path.join(env.HOME, 'missing.json')], '--file'],
    ] as const) {
      const run = await runXx(['wallet', 'policy', 'set', ...args, '--json'], env);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(stderrJson(run, args.join(' ')).details?.flag, flag);
    }
    const after = await runXx(['wallet', 'policy', 'show', '--json'], env);
    assert.deepEqual(stdoutJson(after, 'show').owner_policy, stdoutJson(before, 'show').owner_policy);
  });
});

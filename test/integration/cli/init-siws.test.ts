/**
 * `xx init --chain solana` signs in with Sign In With Solana — through the real `xx` binary against a real
 * test Treasury (HTTP, PostgreSQL, SoftHSM):
 * - on a new seed it creates the account whose identity is the seed's Solana address (m/44'/501'/0'/0') and
 *   ends signed in (whoami answers with the agent PAT), --json saying `sign_in: "siws"`; an owner command
 *   (`xx pat list`, which signs in again with the seed) reaches that account;
 * - `xx init` (--chain both) with the same seed signs in with SIWE and links the Solana address: a seed of
 *   a SIWE account then reaches that same account with `--chain solana`; the text output names the sign-in;
 * - one seed whose keys signed in alone to two accounts (`--chain base`, then `--chain solana`) is refused
 *   the link (exit 1, `identity_already_linked`, naming the two ways in), and both accounts stay as they were.
 */
import assert from 'node:assert/strict';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { assertOk, runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';
const KNOWN_PHRASE = 'test test test test test test test test test test test junk';

describe('xx init --chain solana: Sign In With Solana (CLI subprocess, HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(240_000);
  const { t, forwarder } = useForwardedTreasury({ TREASURY_AUTH_CACHE_MS: '0' });
  const home = (name: string, extra: Record<string, string> = {}) => ({
    ...xxHomeFor(name, forwarder.url, PASSPHRASE),
    ...extra,
  });
  const identitiesOf = async (accountId: string) =>
    (await t.db.knex('identities').where({ account_id: accountId }).orderBy('chain').select('chain', 'address')).map(
      (r) => `${r.chain}:${r.address}`,
    );

  it('a new seed: SIWS creates the account of its Solana address and ends signed in; `xx init` then links the Base key to it', async () => {
    const env = home('siws-new');
    const out = stdoutJson(
      await runXx(['init', '--new-seed', '--chain', 'solana', '--json'], env),
      'init --chain solana',
    );
    assert.equal(out.sign_in, 'siws');
    assert.equal(out.account_created, true);
    assert.equal(out.addresses.base, undefined);
    assert.deepEqual(await identitiesOf(out.account_id), [`solana:${out.addresses.solana}`]);
    const who = stdoutJson(await runXx(['whoami', '--json'], env), 'whoami');
    assert.deepEqual([who.auth_type, who.scope_type, who.scope_id], ['pat', 'agent', out.agent_id]);

    // An owner command signs in again with the seed and reaches this account (linking the Base key to it).
    const pats = stdoutJson(await runXx(['pat', 'list', '--json'], env), 'pat list (owner sign-in)');
    assert.ok(
      pats.pats.some((p: any) => p.id === out.pat_id),
      JSON.stringify(pats),
    );
    assert.equal((await t.db.knex('accounts').count({ n: '*' }))[0]!.n, '1', 'no second account');

    // The same seed with both chains: SIWE, and the Solana attestation puts the Base key in the same account.
    const both = stdoutJson(await runXx(['init', '--json'], env), 'init (both)');
    assert.equal(both.sign_in, 'siwe+siws');
    assert.equal(both.account_id, out.account_id);
    assert.equal(both.account_created, false);
    assert.deepEqual(await identitiesOf(out.account_id), [
      `evm:${both.addresses.base.toLowerCase()}`,
      `solana:${out.addresses.solana}`,
    ]);
  });

  it('a SIWE account: `xx init` links the Solana address, and `--chain solana` then lands in the same account', async () => {
    const env = home('siws-linked', { XX_MNEMONIC: KNOWN_PHRASE });
    const first = stdoutJson(await runXx(['init', '--restore', '--chain', 'both', '--json'], env), 'init --restore');
    assert.equal(first.sign_in, 'siwe+siws');
    const solana = assertOk(await runXx(['init', '--chain', 'solana'], env), 'init --chain solana (text)');
    assert.match(solana.stdout, new RegExp(`Signed in to \\S+ as ${first.account_id} with SIWS \\(Solana key\\)`));
    const again = stdoutJson(await runXx(['init', '--chain', 'solana', '--json'], env), 'init --chain solana');
    assert.equal(again.sign_in, 'siws');
    assert.equal(again.account_id, first.account_id);
    assert.equal(again.agent_id, first.agent_id);
    assert.equal(again.account_created, false);
    const who = stdoutJson(await runXx(['whoami', '--json'], env), 'whoami');
    assert.equal(who.scope_id, first.agent_id);
  });

  it('text output of `xx init` names the sign-in it used', async () => {
    const env = home('siws-text');
    const run = assertOk(await runXx(['init', '--new-seed', '--chain', 'base'], env), 'init --chain base');
    assert.match(run.stdout, /with SIWE \(Base key\);/);
    const both = assertOk(await runXx(['init'], env), 'init');
    assert.match(both.stdout, /with SIWE \(Base key\), Solana address linked by SIWS;/);
  });

  it('one seed split over two accounts (SIWE alone, then SIWS alone) is refused a link: exit 1, identity_already_linked', async () => {
    const env = home('siws-split');
    const evmOnly = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), '--chain base');
    const solanaOnly = stdoutJson(await runXx(['init', '--chain', 'solana', '--json'], env), '--chain solana');
    assert.equal(solanaOnly.account_created, true, 'the Solana address was linked to no account: a new one');
    assert.notEqual(solanaOnly.account_id, evmOnly.account_id);
    const both = await runXx(['init', '--json'], env);
    assert.equal(both.code, 1, both.stderr);
    const e = stderrJson(both, 'init (both) on a split seed');
    assert.equal(e.error_code, 'identity_already_linked');
    assert.match(e.user_message, /xx init --chain solana/);
    assert.equal(e.details?.address ?? e.address, solanaOnly.addresses.solana, JSON.stringify(e));
    assert.deepEqual(await identitiesOf(solanaOnly.account_id), [`solana:${solanaOnly.addresses.solana}`]);
    assert.deepEqual(await identitiesOf(evmOnly.account_id), [`evm:${evmOnly.addresses.base.toLowerCase()}`]);
  });
});

/**
 * The account and buyer commands through the real `xx` binary as a subprocess (no TTY unless a
 * pseudo-terminal is asked for) against a real test Treasury (PostgreSQL + SoftHSM signer, HTTP):
 * - init with every flag, non-interactive: keystore 0600 in a 0700 directory that opens with the
 *   passphrase, the seed and the PAT never on stdout/stderr, the BIP44 Base address of a known phrase
 *   (--restore), session file shape; a new seed of 12 words; --label on an existing account spawns an agent;
 * - whoami, agent {list,show,label,switch}, agent wallets {add,list}, pat {list,create,revoke}, login from
 *   stdin, profile {list,switch,delete}, wallet {generate,list,export,delete}, fund (--print, and a sandbox
 *   faucet), dashboard --print: each --json output parses;
 * - exit 2 naming the flag when a value is missing without a TTY; unknown option and missing argument exit 2;
 * - an expired session (its row expired in the database) is renewed silently with the agent PAT by
 *   `whoami --session`, as a session that acts as the agent only (neither the owner's PATs nor the account's
 *   sellers: `service list --remote` signs the owner in again); revoking that PAT ends it, and then exit 1
 *   with recovery `reauthenticate` as one JSON object on stderr;
 * - init without flags on a pseudo-terminal (script(1)) prompts for the passphrase and never echoes it;
 *   `pat update` signs the owner in again, asking for the passphrase there, and without it (no TTY) is exit 2
 *   while the agent's PAT and its exchanged session cannot lift the cap.
 * XX_KEYSTORE_SCRYPT_LOG_N=10 keeps scrypt cheap here; TREASURY_AUTH_CACHE_MS=0 makes a row expired in the
 * database count at once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { hashToken } from '../../../src/api/auth/token-codec.js';
import { keystoreSchema, openMnemonic } from '../../../src/cli/commands/account/seed-keystore.js';
import type { TestTreasury } from '../../support/api-harness.js';
import {
  assertOk,
  dirsUnder,
  filesUnder,
  hasScript,
  runXx,
  runXxOnTty,
  startForwardedTreasury,
  type Forwarder,
  stderrJson,
  stdoutJson,
  xxHome,
  type XxRun,
} from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';
const KNOWN_PHRASE = 'test test test test test test test test test test test junk';
const KNOWN_BASE_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266'; // m/44'/60'/0'/0/0 of KNOWN_PHRASE

describe('xx account commands (CLI subprocess, HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(240_000);
  let t: TestTreasury;
  let forwarder: Forwarder;
  let server: string;
  let env: Record<string, string> & { HOME: string };
  /** Every stdout and stderr of the main home's runs, to search for secrets at the end. */
  const printed: string[] = [];
  const xx = async (args: string[], input?: string): Promise<XxRun> => {
    const run = await runXx(args, env, input);
    printed.push(run.stdout, run.stderr);
    return run;
  };
  let init: any;

  before(async () => {
    // One agent reads past its first 100 wallets below: more than the default per-agent bound.
    ({ forwarder, t } = await startForwardedTreasury({
      TREASURY_AUTH_CACHE_MS: '0',
      TREASURY_MAX_WALLETS_PER_AGENT: '200',
    }));
    server = forwarder.url;
    env = xxHome('account', {
      XX_API_URL: server,
      XX_KEYSTORE_PASSPHRASE: PASSPHRASE,
      XX_KEYSTORE_SCRYPT_LOG_N: '10',
      XX_MNEMONIC: KNOWN_PHRASE,
    });
  });
  after(async () => {
    await forwarder?.close();
    await t?.stop();
  });

  it('init with every flag and no TTY: keystore 0600 that opens with the passphrase, BIP44 address of the restored phrase, nothing secret printed', async () => {
    init = stdoutJson(
      await xx([
        'init',
        '--server',
        server,
        '--restore',
        '--label',
        'buyer',
        '--chain',
        'both',
        '--profile',
        'main',
        '--json',
      ]),
      'init',
    );
    assert.equal(init.addresses.base, KNOWN_BASE_ADDRESS);
    assert.ok(init.addresses.solana.length >= 32);
    assert.match(init.account_id, /^acc_/);
    assert.match(init.agent_id, /^agt_/);
    assert.match(init.pat_id, /^pat_/);
    assert.equal(init.account_created, true);
    assert.equal(init.agent_spawned, false);
    assert.equal(init.wallets.length, 1);
    assert.match(init.wallets[0].address, /^0x[0-9a-fA-F]{40}$/);

    assert.equal(init.keystore, path.join(env.XX_SEEDS_DIR!, 'default.json'));
    assert.equal(fs.statSync(init.keystore).mode & 0o777, 0o600);
    assert.equal(fs.statSync(env.XX_SEEDS_DIR!).mode & 0o777, 0o700);
    const keystore = keystoreSchema.parse(JSON.parse(fs.readFileSync(init.keystore, 'utf8')));
    assert.equal(keystore.kdf.name, 'scrypt');
    assert.equal(keystore.kdf.log_n, 10);
    assert.equal(keystore.cipher.name, 'xchacha20-poly1305');
    assert.equal(await openMnemonic(keystore, PASSPHRASE), KNOWN_PHRASE);
    assert.ok(!fs.readFileSync(init.keystore, 'utf8').includes('test test'), 'no plaintext seed in the keystore');

    const session = JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8'));
    assert.deepEqual(Object.keys(session).sort(), ['account_id', 'agent_id', 'expires_at', 'server', 'session']);
    assert.match(session.session, /^as_/);
    assert.equal(session.server, server);
    assert.equal(fs.statSync(env.XX_SESSION_PATH!).mode & 0o777, 0o600);
    const agentRecord = JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${init.agent_id}.json`), 'utf8'));
    assert.match(agentRecord.pat, /^xx_pat_/);
    assert.equal(fs.readFileSync(env.XX_ACTIVE_AGENT_PATH!, 'utf8').trim(), init.agent_id);

    // The platform agrees: the account's identities are the restored addresses (the Solana one linked by
    // `--chain both`), the PAT is an agent PAT.
    const identities = await t.db
      .knex('identities')
      .where({ account_id: init.account_id })
      .orderBy('chain')
      .select('chain', 'address');
    assert.deepEqual(identities, [
      { chain: 'evm', address: KNOWN_BASE_ADDRESS.toLowerCase() },
      { chain: 'solana', address: init.addresses.solana },
    ]);

    const human = assertOk(
      await runXx(['init', '--server', server, '--label', 'buyer', '--profile', 'main'], env),
      'init again (human output)',
    );
    printed.push(human.stdout, human.stderr);
    assert.match(human.stdout, /Signed in to/);
    assert.match(human.stdout, new RegExp(`Base address: +${KNOWN_BASE_ADDRESS}`));
    assert.match(human.stdout, /previous agent PAT pat_/, 'a second init names the PAT it did not revoke');
  });

  it('a new seed has the requested number of words and is never printed; --label on an existing account spawns an agent', async () => {
    const fresh = xxHome('fresh', {
      XX_API_URL: server,
      XX_KEYSTORE_PASSPHRASE: PASSPHRASE,
      XX_KEYSTORE_SCRYPT_LOG_N: '10',
    });
    const run = await runXx(
      ['init', '--new-seed', '--words', '12', '--chain', 'base', '--label', 'one', '--json'],
      fresh,
    );
    const out = stdoutJson(run, 'init --new-seed');
    assert.equal(out.addresses.solana, undefined);
    assert.equal(out.seed_created, true);
    const mnemonic = await openMnemonic(
      keystoreSchema.parse(JSON.parse(fs.readFileSync(out.keystore, 'utf8'))),
      PASSPHRASE,
    );
    assert.equal(mnemonic.split(' ').length, 12);
    for (const word of new Set(mnemonic.split(' ').filter((w) => w.length >= 6))) {
      assert.ok(!(run.stdout + run.stderr).includes(` ${word} `), 'no seed word in the output');
    }
    assert.ok(!(run.stdout + run.stderr).includes(mnemonic));

    // Same seed, another --label: a second agent on the same account, now the active one.
    const second = stdoutJson(await runXx(['init', '--label', 'two', '--json'], fresh), 'init --label two');
    assert.equal(second.account_id, out.account_id);
    assert.equal(second.account_created, false);
    assert.equal(second.agent_spawned, true);
    assert.notEqual(second.agent_id, out.agent_id);
    assert.equal(second.seed_created, false, 'the existing keystore is reused');
    const agents = stdoutJson(await runXx(['agent', 'list', '--json'], fresh), 'agent list');
    assert.deepEqual(agents.agents.map((a: any) => [a.label, a.active]).sort(), [
      ['one', false],
      ['two', true],
    ]);
    const remote = await t.db.knex('agents').where({ account_id: out.account_id }).select('id');
    assert.equal(remote.length, 2);

    // Deleting is local and asks first: --yes without a terminal.
    const unconfirmed = await runXx(['agent', 'delete', 'one', '--json'], fresh);
    assert.equal(unconfirmed.code, 2);
    assert.match(stderrJson(unconfirmed, 'agent delete without --yes').user_message, /--yes/);
    assert.equal(
      stdoutJson(await runXx(['agent', 'delete', 'one', '--yes', '--json'], fresh), 'agent delete').deleted,
      true,
    );
    assert.deepEqual(
      stdoutJson(await runXx(['agent', 'list', '--json'], fresh), 'agent list').agents.map((a: any) => a.label),
      ['two'],
    );
    assert.equal(
      (await t.db.knex('agents').where({ id: out.agent_id }).first('id')).id,
      out.agent_id,
      'the agent still exists on the platform',
    );

    // An agent without any wallet (init --chain solana makes no managed wallet): buy names create_wallet
    // (the recovery kind of docs/api.md#errors) before anything is asked of the seller.
    const walletless = stdoutJson(
      await runXx(['init', '--label', 'three', '--chain', 'solana', '--json'], fresh),
      'init --chain solana',
    );
    assert.deepEqual(walletless.wallets, []);
    const noWallet = await runXx(['buy', 'http://127.0.0.1:9/joke', '--json'], fresh);
    assert.equal(noWallet.code, 1);
    const e = stderrJson(noWallet, 'buy without a wallet');
    assert.equal(e.error_code, 'no_wallet');
    assert.deepEqual(e.recovery, {
      kind: 'create_wallet',
      chain: 'base',
      dashboard_url: `${server}/dashboard/wallets/new`,
      cli_command: 'xx agent wallets add',
    });
  });

  it('whoami, agent and agent wallets commands; every --json parses', async () => {
    const who = stdoutJson(await xx(['whoami', '--json']), 'whoami');
    assert.deepEqual([who.auth_type, who.scope_type, who.scope_id], ['pat', 'agent', init.agent_id]);
    const whoHuman = assertOk(await xx(['whoami']), 'whoami (human)');
    assert.match(whoHuman.stdout, /auth_type: +pat/);
    assert.match(whoHuman.stdout, new RegExp(`scope_id: +${init.agent_id}`));

    const added = stdoutJson(
      await xx(['agent', 'wallets', 'add', '--chain', 'base', '--label', 'second', '--json']),
      'agent wallets add',
    );
    assert.match(added.id, /^wal_/);
    assert.equal(added.label, 'second');
    assert.equal(added.network, 'eip155:8453', '--chain base makes a Base wallet, whatever the server defaults to');
    assert.equal((await t.db.knex('wallets').where({ id: added.id }).first('network')).network, 'eip155:8453');
    assert.notEqual(added.address, init.wallets[0].address);
    const wallets = stdoutJson(await xx(['agent', 'wallets', 'list', '--json']), 'agent wallets list');
    assert.deepEqual(wallets.wallets.map((w: any) => w.id).sort(), [init.wallets[0].id, added.id].sort());
    // A chain the server does not serve is sent and refused there, naming the chains it serves.
    const unknownChain = await xx(['agent', 'wallets', 'add', '--chain', 'dogecoin', '--json']);
    assert.equal(unknownChain.code, 1);
    const refused = stderrJson(unknownChain, 'wallets add --chain dogecoin');
    assert.equal(refused.error_code, 'chain_not_supported');
    assert.ok(refused.details.supported.includes('base'), JSON.stringify(refused));
    const badChain = await xx(['agent', 'wallets', 'add', '--chain', 'Doge Coin', '--json']);
    assert.equal(badChain.code, 2);
    assert.match(stderrJson(badChain, 'wallets add --chain "Doge Coin"').user_message, /--chain/);

    const shown = stdoutJson(await xx(['agent', 'show', '--json']), 'agent show');
    assert.equal(shown.agent_id, init.agent_id);
    assert.equal(shown.wallets.length, 2);
    assert.equal(shown.pat, undefined, 'agent show never prints the PAT');
    const listed = stdoutJson(await xx(['agent', 'list', '--json']), 'agent list');
    assert.equal(listed.agents.length, 1);
    assert.equal(listed.agents[0].pat, undefined, 'agent list never prints the PAT');
    assert.equal(
      stdoutJson(await xx(['agent', 'label', init.agent_id, 'renamed', '--json']), 'agent label').label,
      'renamed',
    );
    assert.equal(
      stdoutJson(await xx(['agent', 'switch', 'renamed', '--json']), 'agent switch').agent_id,
      init.agent_id,
    );
  });

  it('agent wallets list and agent show read past the first 100 wallets the agent view carries, and store them all', async () => {
    const record = () =>
      JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${init.agent_id}.json`), 'utf8')) as {
        pat: string;
        wallets: Array<{ id: string }>;
      };
    const { pat } = record();
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, i) => {
          const made = await t.request('POST', `/v1/agents/${init.agent_id}/wallets`, {
            token: pat,
            body: { label: `bulk ${batch * 10 + i}` },
          });
          assert.equal(made.status, 201, JSON.stringify(made.body));
        }),
      );
    }
    const account = (await t.db.knex('agents').where({ id: init.agent_id }).first('treasury_account_id'))
      .treasury_account_id;
    const expected = (
      await t.db
        .knex('wallets')
        .where({ account_id: account, status: 'active' })
        .orderBy([{ column: 'created_at' }, { column: 'id' }])
        .select('id')
    ).map((w: { id: string }) => w.id);
    assert.equal(expected.length, 102);
    const listed = stdoutJson(await xx(['agent', 'wallets', 'list', '--json']), 'agent wallets list');
    assert.deepEqual(
      listed.wallets.map((w: { id: string }) => w.id),
      expected,
      'every active wallet once, oldest first',
    );
    assert.deepEqual(
      record().wallets.map((w) => w.id),
      expected,
      'the agent record stores them all',
    );
    const shown = stdoutJson(await xx(['agent', 'show', '--json']), 'agent show');
    assert.deepEqual(
      shown.wallets.map((w: { id: string }) => w.id),
      expected,
    );
  });

  it('pat list/create/revoke, login from stdin and profiles; every --json parses', async () => {
    const before = stdoutJson(await xx(['pat', 'list', '--json']), 'pat list');
    assert.ok(before.pats.some((p: any) => p.id === init.pat_id));
    assert.ok(
      before.pats.every((p: any) => p.pat === undefined && p.token === undefined),
      'no secrets in pat list',
    );

    const minted = stdoutJson(
      await runXx(['pat', 'create', '--label', 'ci', '--daily-cap', '1', '--json'], env),
      'pat create',
    ); // prints a PAT on purpose: not in `printed`
    assert.match(minted.pat, /^xx_pat_/);
    assert.equal(minted.scope_type, 'agent');
    assert.equal(minted.daily_cap_usd, '1');
    const login = stdoutJson(await xx(['login', '--profile', 'ci', '--json'], minted.pat), 'login (stdin)');
    assert.deepEqual([login.profile, login.scope_type, login.scope_id], ['ci', 'agent', init.agent_id]);
    const profiles = stdoutJson(await xx(['profile', 'list', '--json']), 'profile list');
    assert.deepEqual(profiles.profiles.map((p: any) => [p.name, p.active]).sort(), [
      ['ci', true],
      ['main', false],
    ]);
    assert.ok(!JSON.stringify(profiles).includes('xx_pat_'), 'no PAT in profile list');
    assert.equal(stdoutJson(await xx(['profile', 'switch', 'main', '--json']), 'profile switch').active, 'main');

    // pat update: the daily cap raised, then removed; the server holds what the CLI said; bad values exit 2.
    assert.equal(
      stdoutJson(await xx(['pat', 'update', minted.id, '--daily-cap', '2.5', '--json']), 'pat update').daily_cap_usd,
      '2.5',
    );
    assert.equal(
      String((await t.db.knex('api_tokens').where({ id: minted.id }).first('daily_cap_micro')).daily_cap_micro),
      '2500000',
    );
    assert.equal(
      stdoutJson(await xx(['pat', 'update', minted.id, '--daily-cap', 'none', '--json']), 'pat update none')
        .daily_cap_usd,
      null,
    );
    assert.equal(
      (await t.db.knex('api_tokens').where({ id: minted.id }).first('daily_cap_micro')).daily_cap_micro,
      null,
    );
    for (const args of [['--daily-cap', '-1'], ['--daily-cap', '1.0000001'], []]) {
      const bad = await xx(['pat', 'update', minted.id, ...args, '--json']);
      assert.equal(bad.code, 2, `pat update ${args.join(' ')}: ${bad.stderr}`);
    }
    assert.equal((await xx(['pat', 'update', 'pat_nothex', '--daily-cap', '1', '--json'])).code, 2);

    const revoked = stdoutJson(await xx(['pat', 'revoke', minted.id, '--json']), 'pat revoke');
    assert.equal(revoked.id, minted.id);
    assert.ok(revoked.revoked_at);
    const after = stdoutJson(await xx(['pat', 'list', '--json']), 'pat list after revoke');
    assert.ok(after.pats.find((p: any) => p.id === minted.id).revoked_at);
    const refused = await t.request('GET', '/v1/auth/whoami', { token: minted.pat });
    assert.equal(refused.status, 401);
    assert.equal(stdoutJson(await xx(['profile', 'delete', 'ci', '--json']), 'profile delete').profile, 'ci');
    assert.equal(fs.statSync(env.XX_CREDENTIALS_PATH!).mode & 0o777, 0o600);

    const badId = await xx(['pat', 'revoke', 'not-a-pat', '--json']);
    assert.equal(badId.code, 2);
    assert.match(stderrJson(badId, 'pat revoke not-a-pat').user_message, /<pat_id>/);
  });

  it('wallet keystores, fund (printed and from a sandbox faucet) and dashboard; every --json parses', async () => {
    const generated = stdoutJson(
      await xx(['wallet', 'generate', '--name', 'spare', '--words', '12', '--json']),
      'wallet generate',
    );
    assert.match(generated.addresses.base, /^0x[0-9a-fA-F]{40}$/);
    assert.equal(fs.statSync(generated.file).mode & 0o777, 0o600);
    const imported = stdoutJson(
      await xx(['wallet', 'import', '--name', 'imported', '--json']),
      'wallet import (XX_MNEMONIC)',
    );
    assert.equal(imported.addresses.base, KNOWN_BASE_ADDRESS);
    const exists = await xx(['wallet', 'import', '--name', 'imported', '--json']);
    assert.equal(exists.code, 2);
    assert.equal(stderrJson(exists, 'wallet import over an existing name').error_code, 'keystore_exists');
    const list = stdoutJson(await xx(['wallet', 'list', '--json']), 'wallet list');
    assert.deepEqual(list.keystores.map((k: any) => k.name).sort(), ['default', 'imported', 'spare']);
    const noConfirm = await xx(['wallet', 'export', '--name', 'spare', '--json']);
    assert.equal(noConfirm.code, 2, 'export cannot be confirmed without a TTY or --yes');
    assert.match(stderrJson(noConfirm, 'wallet export').user_message, /--yes/);
    const exported = await runXx(['wallet', 'export', '--name', 'spare', '--yes', '--json'], env); // prints a seed on purpose: not in `printed`
    assert.equal(stdoutJson(exported, 'wallet export --yes').mnemonic.split(' ').length, 12);
    assert.equal(
      stdoutJson(await xx(['wallet', 'delete', '--name', 'spare', '--yes', '--json']), 'wallet delete').deleted,
      true,
    );
    const wrong = await runXx(['wallet', 'export', '--yes', '--json'], {
      ...env,
      XX_KEYSTORE_PASSPHRASE: 'not the passphrase',
    });
    assert.equal(wrong.code, 1);
    assert.equal(stderrJson(wrong, 'export with a wrong passphrase').error_code, 'wrong_passphrase');

    const faucetUrls = stdoutJson(await xx(['fund', '--testnet', '--print', '--json']), 'fund --print');
    assert.equal(faucetUrls.funded, false);
    assert.ok(faucetUrls.addresses.includes(init.wallets[0].address));
    assert.match(faucetUrls.urls.base_sepolia_usdc, new RegExp(`address=${init.wallets[0].address}`));
    assert.equal(faucetUrls.solana, init.addresses.solana);
    assert.equal(faucetUrls.opened, false, '--print only prints');
    if (hasScript()) {
      // On a terminal, fund --testnet opens the faucet with the platform opener (a recording xdg-open on PATH);
      // --print on the same terminal, and a run without a terminal, open nothing.
      const bin = fs.mkdtempSync(path.join(path.dirname(env.HOME), 'xx-opener-')); // outside HOME: not the CLI's file
      const openedFile = path.join(bin, 'opened.txt');
      fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$#" "$@" > '${openedFile}'\n`, {
        mode: 0o755,
      });
      const ttyEnv = { ...env, PATH: `${bin}:${process.env.PATH ?? ''}` };
      const opened = runXxOnTty(['fund', '--testnet'], ttyEnv);
      assert.equal(await opened.exit, 0, opened.screen);
      assert.match(opened.screen, /Opened the testnet faucet in your browser/);
      for (let i = 0; i < 100 && !fs.existsSync(openedFile); i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(fs.readFileSync(openedFile, 'utf8').trim().split('\n'), [
        '1',
        faucetUrls.urls.base_sepolia_usdc,
      ]);
      fs.rmSync(openedFile);
      const printedOnly = runXxOnTty(['fund', '--testnet', '--print'], ttyEnv);
      assert.equal(await printedOnly.exit, 0, printedOnly.screen);
      assert.ok(printedOnly.screen.includes(faucetUrls.urls.base_sepolia_usdc), printedOnly.screen);
      const noTty = assertOk(await runXx(['fund', '--testnet'], ttyEnv), 'fund --testnet without a terminal');
      assert.ok(noTty.stdout.includes(faucetUrls.urls.base_sepolia_usdc));
      assert.doesNotMatch(noTty.stdout, /Opened/);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(fs.existsSync(openedFile), false, 'nothing opened under --print or without a terminal');
      fs.rmSync(bin, { recursive: true, force: true });
    }
    const noTestnet = await xx(['fund', '--json']);
    assert.equal(noTestnet.code, 2);
    assert.match(stderrJson(noTestnet, 'fund without --testnet').user_message, /--testnet/);

    // A sandbox described the way `npm start` writes it, with a faucet that records what it is asked.
    const asked: unknown[] = [];
    const faucet = http.createServer((req, res) => {
      let body = '';
      req
        .on('data', (c) => (body += c))
        .on('end', () => {
          asked.push(JSON.parse(body));
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ tx_hash: `0x${'ab'.repeat(32)}`, balance_raw: '2000000' }));
        });
    });
    await new Promise<void>((resolve) => faucet.listen(0, '127.0.0.1', resolve));
    try {
      fs.mkdirSync(env.TREASURY_DATA_DIR!, { recursive: true });
      fs.writeFileSync(
        path.join(env.TREASURY_DATA_DIR!, 'sandbox.json'),
        JSON.stringify({
          api_url: server,
          faucet_url: `http://127.0.0.1:${(faucet.address() as AddressInfo).port}`,
          chain_id: 84532,
        }),
        { mode: 0o600 },
      );
      const funded = stdoutJson(
        await xx(['fund', '--testnet', '--amount', '2', '--json']),
        'fund from the sandbox faucet',
      );
      assert.equal(funded.funded, true);
      assert.equal(funded.address, init.wallets[0].address);
      assert.deepEqual(asked, [{ address: init.wallets[0].address, amount_usd: '2' }]);
      // --chain picks the agent's first wallet on that chain: none on Solana here (the server is asked too).
      const noSolana = await xx(['fund', '--testnet', '--chain', 'solana', '--json']);
      assert.equal(noSolana.code, 1, noSolana.stderr);
      assert.equal(stderrJson(noSolana, 'fund --chain solana').error_code, 'wallet_not_found');
      const badChain = await xx(['fund', '--testnet', '--chain', 'dogecoin', '--json']);
      assert.equal(badChain.code, 2);
      assert.match(stderrJson(badChain, 'fund --chain dogecoin').user_message, /--chain/);
      // A faucet URL off loopback in an edited sandbox.json is refused before any request (0.0.0.0 would reach
      // this machine's recorder: nothing may be asked of it).
      fs.writeFileSync(
        path.join(env.TREASURY_DATA_DIR!, 'sandbox.json'),
        JSON.stringify({ api_url: server, faucet_url: `http://0.0.0.0:${(faucet.address() as AddressInfo).port}` }),
        { mode: 0o600 },
      );
      const offLoopback = await xx(['fund', '--testnet', '--amount', '2', '--json']);
      assert.equal(offLoopback.code, 1, offLoopback.stderr);
      assert.equal(stderrJson(offLoopback, 'fund from a faucet off loopback').error_code, 'faucet_not_loopback');
      assert.equal(asked.length, 1, 'the faucet off loopback was not asked');
    } finally {
      faucet.close();
      fs.rmSync(path.join(env.TREASURY_DATA_DIR!, 'sandbox.json'), { force: true });
    }

    // Without the code the browser asked with there is no handoff (exit 2 naming --state), and no PAT.
    const before = Number((await t.db.knex('api_tokens').where({ kind: 'pat' }).count({ n: '*' }))[0]!.n);
    const unasked = await runXx(['dashboard', '--print', '--json'], env);
    assert.equal(unasked.code, 2, unasked.stderr);
    assert.match(unasked.stderr + unasked.stdout, /--state/);
    assert.equal(Number((await t.db.knex('api_tokens').where({ kind: 'pat' }).count({ n: '*' }))[0]!.n), before);
    const state = 'Zm9yLXRoZS1kYXNoYm9hcmQ';
    const dashboard = await runXx(['dashboard', '--print', '--json', '--state', state], env); // hands a single-use PAT over on purpose
    const handoff = stdoutJson(dashboard, 'dashboard --print');
    assert.match(handoff.url, /\/cli-handoff#pat=xx_pat_[A-Za-z0-9_-]+&state=Zm9yLXRoZS1kYXNoYm9hcmQ$/);
    const single = await t.db
      .knex('api_tokens')
      .where({ id: handoff.pat_id })
      .first('single_use', 'scope_id', 'parent_token_id', 'daily_cap_micro');
    // Bound to the active agent and minted within its PAT: the agent's cap, not an uncapped session.
    const agentPat = await t.db
      .knex('api_tokens')
      .where({ id: single.parent_token_id })
      .first('kind', 'scope_id', 'daily_cap_micro', 'revoked_at');
    assert.deepEqual(
      [single.single_use, single.scope_id, agentPat.kind, agentPat.scope_id, agentPat.revoked_at],
      [true, init.agent_id, 'pat', init.agent_id, null],
    );
    assert.notEqual(agentPat.daily_cap_micro, null, 'xx init caps the agent PAT');
    assert.equal(single.daily_cap_micro, agentPat.daily_cap_micro);
  });

  it('a machine with only a legacy master-key config gets the migration prompt (exit 1), never the key printed', async () => {
    const legacy = xxHome('legacy', { XX_API_URL: server });
    const key = `xx_live_sk_${'a1'.repeat(16)}`;
    fs.mkdirSync(path.dirname(legacy.XX_CONFIG_PATH!), { recursive: true });
    fs.writeFileSync(legacy.XX_CONFIG_PATH!, JSON.stringify({ api_url: server, api_key: key }));
    for (const args of [
      ['service', 'list', '--remote', '--json'],
      ['pat', 'list', '--json'],
      ['whoami', '--json'],
      ['buy', `${server}/anything`, '--json'],
      ['agent', 'wallets', 'list', '--json'],
      ['endpoints', 'list', '--json'],
    ]) {
      const run = await runXx(args, legacy);
      assert.equal(run.code, 1, `${args.join(' ')}: ${run.stderr}`);
      const err = stderrJson(run, args.join(' '));
      assert.equal(err.error_code, 'master_key_removed', args.join(' '));
      assert.match(err.user_message, /master keys were removed on 2026-04-27.*xx init/i);
      assert.equal(err.recovery.kind, 'reauthenticate');
      assert.ok(!(run.stdout + run.stderr).includes(key), 'the key is never printed');
    }
    const plain = await runXx(['pat', 'list'], legacy);
    assert.match(plain.stderr, /master key/);

    // Without one, the same commands say what is missing, as before.
    const fresh = xxHome('no-legacy', { XX_API_URL: server });
    assert.equal(stderrJson(await runXx(['pat', 'list', '--json'], fresh), 'pat list').error_code, 'no_session');
    assert.equal(
      stderrJson(await runXx(['agent', 'wallets', 'list', '--json'], fresh), 'agent wallets list').error_code,
      'no_active_agent',
    );
  });

  it('without a TTY a missing value is exit 2 naming the flag; unknown options and missing arguments are exit 2', async () => {
    const bare = xxHome('bare', { XX_API_URL: server, XX_KEYSTORE_SCRYPT_LOG_N: '10' });
    const noPassphrase = await runXx(['init', '--json'], bare);
    assert.equal(noPassphrase.code, 2);
    const e = stderrJson(noPassphrase, 'init without a passphrase');
    assert.equal(e.error_code, 'missing_argument');
    assert.match(e.user_message, /XX_KEYSTORE_PASSPHRASE/);
    assert.equal(noPassphrase.stdout, '');
    const noPhrase = await runXx(['init', '--restore'], { ...bare, XX_KEYSTORE_PASSPHRASE: PASSPHRASE });
    assert.equal(noPhrase.code, 2);
    assert.match(noPhrase.stderr, /XX_MNEMONIC/);
    const noToken = await runXx(['login', '--json'], bare);
    assert.equal(noToken.code, 2);
    assert.match(stderrJson(noToken, 'login without a token').user_message, /--token/);
    const noSession = await runXx(['pat', 'list', '--json'], bare);
    assert.equal(noSession.code, 1);
    assert.equal(stderrJson(noSession, 'pat list without a session').recovery.kind, 'reauthenticate');

    const unknown = await xx(['whoami', '--bogus', '--json']);
    assert.equal(unknown.code, 2);
    assert.equal(stderrJson(unknown, 'unknown option').error_code, 'invalid_arguments');
    assert.match(stderrJson(unknown, 'unknown option').user_message, /--bogus/);
    const unknownHuman = await xx(['whoami', '--bogus']);
    assert.equal(unknownHuman.code, 2);
    assert.match(unknownHuman.stderr, /unknown option '--bogus'/);
    const missingArgument = await xx(['agent', 'switch', '--json']);
    assert.equal(missingArgument.code, 2);
    assert.equal(stderrJson(missingArgument, 'missing argument').error_code, 'invalid_arguments');
    const badChain = await xx(['init', '--chain', 'dogecoin', '--json']);
    assert.equal(badChain.code, 2);
    assert.match(stderrJson(badChain, 'init --chain dogecoin').user_message, /--chain/);
    const badEnv = await runXx(['whoami', '--json'], { ...env, XX_ENV: 'staging' });
    assert.equal(badEnv.code, 2);
    assert.equal(stderrJson(badEnv, 'XX_ENV=staging').error_code, 'invalid_env');
  });

  it('an expired session is renewed silently with the agent PAT (an exchanged one, not the owner); a revoked agent PAT ends it and is exit 1 with recovery reauthenticate', async () => {
    const expire = async () => {
      const { session } = JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8'));
      const n = await t.db
        .knex('api_tokens')
        .where({ token_hash: hashToken(session), kind: 'session' })
        .update({ expires_at: new Date(Date.now() - 60_000) });
      assert.equal(n, 1);
      return session as string;
    };
    const old = await expire();
    assert.equal(
      (await t.request('GET', '/v1/auth/whoami', { token: old })).status,
      401,
      'the server refuses the expired session',
    );
    const agentId = fs.readFileSync(env.XX_ACTIVE_AGENT_PATH!, 'utf8').trim();
    // A command using the session (an agent read: whoami and the agent's wallets) renews it.
    const asSession = stdoutJson(
      await xx(['whoami', '--session', '--json']),
      'whoami --session with an expired session',
    );
    assert.deepEqual(
      [asSession.source, asSession.session_origin, asSession.agent_id],
      ['session', 'pat_exchange', agentId],
    );
    assert.ok(asSession.wallets.length >= 1, "the agent's wallets, read with the renewed session");
    const renewed = JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8'));
    assert.notEqual(renewed.session, old, 'a new session was saved');
    assert.equal(renewed.account_id, init.account_id);
    assert.equal(fs.statSync(env.XX_SESSION_PATH!).mode & 0o777, 0o600);
    // The renewed session was exchanged from the agent PAT: it acts as the agent, never as the owner — neither
    // the owner's PATs nor the account's sellers, which that PAT may not read either.
    const renewedWho = await t.request('GET', '/v1/auth/whoami', { token: renewed.session });
    assert.deepEqual([renewedWho.body.session_origin, renewedWho.body.agent_id], ['pat_exchange', agentId]);
    const lift = await t.request('GET', '/v1/pats', { token: renewed.session });
    assert.deepEqual([lift.status, lift.body.error_code], [403, 'fresh_sign_in_required']);
    const sellersRead = await t.request('GET', '/v1/sellers', { token: renewed.session });
    assert.deepEqual([sellersRead.status, sellersRead.body.error_code], [403, 'fresh_sign_in_required']);
    // `service list --remote` signs the owner in again with the seed instead, and stores nothing.
    const sellers = stdoutJson(await xx(['service', 'list', '--remote', '--json']), 'service list --remote');
    assert.ok(Array.isArray(sellers.sellers));
    assert.equal(JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8')).session, renewed.session);

    // A session file past its own expires_at is renewed before any call.
    fs.writeFileSync(
      env.XX_SESSION_PATH!,
      JSON.stringify({ ...renewed, expires_at: new Date(Date.now() - 1000).toISOString() }),
      { mode: 0o600 },
    );
    stdoutJson(await xx(['whoami', '--session', '--json']), 'whoami --session with a session file past expires_at');
    assert.notEqual(JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8')).session, renewed.session);

    const agent = JSON.parse(fs.readFileSync(path.join(env.XX_AGENTS_DIR!, `${init.agent_id}.json`), 'utf8'));
    stdoutJson(await xx(['pat', 'revoke', agent.pat_id, '--json']), 'pat revoke (the agent PAT)');
    // Revoking the PAT ended the session exchanged from it: no need to expire it.
    const { session: ended } = JSON.parse(fs.readFileSync(env.XX_SESSION_PATH!, 'utf8'));
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: ended })).status, 401);
    const refused = await xx(['whoami', '--session', '--json']);
    assert.equal(refused.code, 1, refused.stderr);
    const e = stderrJson(refused, 'whoami --session with a revoked PAT');
    assert.equal(e.error_code, 'reauthenticate');
    assert.deepEqual(e.recovery, {
      kind: 'reauthenticate',
      cli_command: 'xx init',
      login_command: 'xx login --token -',
    });
    assert.equal(refused.stdout, '');
    const human = await xx(['whoami', '--session']);
    assert.equal(human.code, 1);
    assert.match(human.stderr, /Sign in again/);
    // Calls with the revoked PAT itself carry the server's recovery block unchanged.
    const who = await xx(['whoami', '--json']);
    assert.equal(who.code, 1);
    assert.deepEqual(
      [stderrJson(who, 'whoami with a revoked PAT').status, stderrJson(who, 'whoami').recovery.kind],
      [401, 'reauthenticate'],
    );
  });

  it('never printed the seed, a PAT or a session; every file it wrote is 0600 in 0700 directories', () => {
    const all = printed.join('\n');
    assert.ok(!all.includes(KNOWN_PHRASE), 'the seed is never printed');
    assert.ok(!all.includes('test test test'), 'no part of the seed is printed');
    assert.ok(!all.includes(PASSPHRASE), 'the passphrase is never printed');
    assert.doesNotMatch(
      all,
      /xx_pat_[A-Za-z0-9]/,
      'PATs only from pat create / dashboard, which are left out of this check',
    );
    assert.doesNotMatch(all, /as_[A-Za-z0-9_-]{20}/, 'sessions are never printed');
    for (const file of filesUnder(env.HOME).filter((f) => !f.startsWith(env.TREASURY_DATA_DIR!)))
      assert.equal(fs.statSync(file).mode & 0o777, 0o600, `${file} is 0600`);
    for (const dir of dirsUnder(env.HOME).filter((d) => !d.startsWith(env.TREASURY_DATA_DIR!)))
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700, `${dir} is 0700`);
  });

  it('init without flags on a terminal prompts for the passphrase twice and never echoes it', async function () {
    if (!hasScript()) this.skip(); // script(1) from util-linux provides the pseudo-terminal
    const tty = xxHome('tty', { XX_API_URL: server, XX_KEYSTORE_SCRYPT_LOG_N: '10' });
    const session = runXxOnTty(['init'], tty);
    try {
      await session.answer(/New keystore passphrase/, PASSPHRASE);
      await session.answer(/Repeat the passphrase/, PASSPHRASE);
      assert.equal(await session.exit, 0, session.screen);
    } finally {
      session.kill();
    }
    assert.match(session.screen, /Signed in to/);
    assert.ok(!session.screen.includes(PASSPHRASE), 'the passphrase is not echoed');
    const ks = keystoreSchema.parse(JSON.parse(fs.readFileSync(path.join(tty.XX_SEEDS_DIR!, 'default.json'), 'utf8')));
    const mnemonic = await openMnemonic(ks, PASSPHRASE);
    assert.equal(mnemonic.split(' ').length, 24);
    assert.ok(!session.screen.includes(mnemonic), 'the new seed is not shown');

    // A money-control command signs the owner in again: on a terminal it asks for the keystore passphrase.
    const minted = stdoutJson(
      await runXx(['pat', 'create', '--label', 'tty', '--daily-cap', '1', '--json'], {
        ...tty,
        XX_KEYSTORE_PASSPHRASE: PASSPHRASE,
      }),
      'pat create',
    );
    const update = runXxOnTty(['pat', 'update', minted.id, '--daily-cap', '3'], tty);
    try {
      await update.answer(/Keystore passphrase \(`xx pat update` signs in again\)/, PASSPHRASE);
      assert.equal(await update.exit, 0, update.screen);
    } finally {
      update.kill();
    }
    assert.ok(!update.screen.includes(PASSPHRASE), 'the passphrase is not echoed');
    assert.equal(
      (await t.db.knex('api_tokens').where({ id: minted.id }).first('daily_cap_micro')).daily_cap_micro,
      '3000000',
    );
  });

  it("pat update without the keystore passphrase (no TTY) is exit 2 naming XX_KEYSTORE_PASSPHRASE; the agent's own PAT and its session cannot lift the cap", async () => {
    const minted = stdoutJson(
      await runXx(['pat', 'create', '--label', 'capped', '--daily-cap', '1', '--json'], env),
      'pat create',
    );
    const noPassphrase = await runXx(['pat', 'update', minted.id, '--daily-cap', 'none', '--json'], {
      ...env,
      XX_KEYSTORE_PASSPHRASE: '',
    });
    assert.equal(noPassphrase.code, 2, noPassphrase.stderr);
    assert.match(stderrJson(noPassphrase, 'pat update without a passphrase').user_message, /XX_KEYSTORE_PASSPHRASE/);
    const exchanged = (await t.request('POST', '/v1/identity/exchange-pat', { token: minted.pat })).body
      .session as string;
    for (const token of [minted.pat, exchanged]) {
      const lift = await t.request('PATCH', `/v1/pats/${minted.id}`, { token, body: { daily_cap_usd: null } });
      assert.equal(lift.status, 403);
    }
    assert.equal(
      (await t.db.knex('api_tokens').where({ id: minted.id }).first('daily_cap_micro')).daily_cap_micro,
      '1000000',
      'the cap the owner set holds',
    );
  });
});

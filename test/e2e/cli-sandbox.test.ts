/**
 * The real `xx` binary (bin/xx.mjs) as a subprocess against the sandbox of `npm start` (PostgreSQL,
 * SoftHSM signer, API, anvil, the official-package facilitator, faucet):
 * - buyer: init (keystore 0600, seed never printed) → whoami → fund from the sandbox faucet → buy a paid
 *   endpoint (receipt in --json) → the seller's `ledger export --format csv` has the payment; buy an `upto`
 *   route that charges 40 % of its maximum: the settlement Treasury recorded, the rest given back;
 * - seller: service init → endpoints add → verify (well-known file) → status;
 * - --restore derives the BIP44 address of a known phrase; a price over --max is InsufficientBudgetError
 *   with nothing paid; an expired/unknown session is renewed silently with the agent PAT; a revoked PAT
 *   is exit 1 with the reauthenticate recovery; every --json stdout parses;
 * - init without flags, driven through a pseudo-terminal (script(1)), prompts for the passphrase.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Koa from 'koa';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { setSettlementOverrides, x402Koa } from 'treasury/koa';
import { openMnemonic, keystoreSchema } from '../../src/cli/commands/account/seed-keystore.js';
import { loadScaledDeadline } from '../support/load-scaled-deadline.js';
import { CLI_PASSPHRASE, sandboxCliEnv, startSandbox, type RunningSandbox } from '../support/sandbox-harness.js';
import {
  assertOk,
  filesUnder,
  runXx,
  stderrJson,
  stdoutJson,
  XX_BIN,
  type XxRun,
} from '../integration/cli/xx-process.js';

const PASSPHRASE = CLI_PASSPHRASE;
const homeEnv = sandboxCliEnv;
const xx = runXx;
const ok = assertOk;
const json = stdoutJson;
const errJson = (run: XxRun) => stderrJson(run, 'the command');

describe('xx CLI against the npm start sandbox (real binary, real chain)', function () {
  this.timeout(300_000);
  let sandbox: RunningSandbox;
  let env: Record<string, string>;
  let seller: http.Server | undefined;
  let metered: http.Server | undefined;

  before(async () => {
    // Every `xx` user here signs in from 127.0.0.1: on a quick run the file's sign-ins (init, service init,
    // --restore, the prompted init) fall within one minute and pass the per-address limits of a deployment (10
    // inits, 30 nonces), which answer 429 — limits their own tests hold (test/integration/api/rate-limits.test.ts),
    // not what this file is about.
    sandbox = await startSandbox({ TREASURY_RATE_LIMIT_INIT: '200', TREASURY_RATE_LIMIT_NONCE: '600' });
    env = homeEnv(sandbox, 'buyer');
  });
  after(async () => {
    for (const server of [seller, metered]) {
      server?.closeAllConnections();
      server?.close();
    }
    await sandbox?.stop();
  });

  it('init → whoami → fund → buy; service init → endpoints add → verify → status → ledger export shows the payment', async () => {
    const outputs: string[] = [];
    const run = async (args: string[]) => {
      const r = await xx(args, env);
      outputs.push(r.stdout + r.stderr);
      return r;
    };

    // init: seed sealed in the keystore (0600), never printed; session, agent PAT and a managed wallet.
    const init = json(await run(['init', '--server', sandbox.info.api_url, '--label', 'buyer', '--json']), 'init');
    assert.match(init.agent_id, /^agt_/);
    assert.match(init.addresses.base, /^0x[0-9a-fA-F]{40}$/);
    assert.ok(init.addresses.solana.length >= 32);
    assert.equal(init.wallets.length, 1);
    const keystore = keystoreSchema.parse(JSON.parse(fs.readFileSync(init.keystore, 'utf8')));
    const mnemonic = await openMnemonic(keystore, PASSPHRASE);
    assert.equal(mnemonic.split(' ').length, 24);

    const whoami = json(await run(['whoami', '--json']), 'whoami');
    assert.deepEqual([whoami.auth_type, whoami.scope_type, whoami.scope_id], ['pat', 'agent', init.agent_id]);

    const funded = json(await run(['fund', '--testnet', '--amount', '2', '--permit2', '--json']), 'fund');
    assert.equal(funded.funded, true);
    assert.match(
      funded.permit2_approval_tx,
      /^0x[0-9a-f]{64}$/,
      'the sandbox faucet approved Permit2 for upto payments',
    );
    assert.equal(funded.address, init.wallets[0].address);

    // The seller side, same account: register, price an endpoint, serve it behind our Koa middleware.
    const service = json(await run(['service', 'init', '--name', 'CLI Jokes', '--json']), 'service init');
    const record = JSON.parse(
      fs.readFileSync(path.join(env.XX_HOME!, 'services', `${service.seller_id}.json`), 'utf8'),
    ) as { pat: string };
    const endpoint = json(
      await run(['endpoints', 'add', '--path', '/joke', '--price', '0.01', '--json']),
      'endpoints add',
    );
    assert.equal(endpoint.price, '0.01');
    const payTo = privateKeyToAccount(generatePrivateKey()).address;
    let wellKnown = '';
    const app = new Koa();
    app.use(async (ctx, next) => {
      if (ctx.path === '/.well-known/xx-verification.txt') {
        ctx.body = wellKnown;
        return;
      }
      await next();
    });
    app.use(
      x402Koa({
        token: record.pat,
        price: '0.01',
        pay_to: payTo,
        facilitator_url: sandbox.info.facilitator_url,
        api_url: sandbox.info.api_url,
        env: {},
      }),
    );
    app.use((ctx) => {
      ctx.body = { joke: 'two custodians walk into a bar' };
    });
    seller = http.createServer(app.callback());
    await new Promise<void>((resolve) => seller!.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;

    const unverified = await run(['verify', '--origin', origin, '--json']);
    assert.equal(unverified.code, 1);
    const tokenLine = errJson(unverified).details.token as string;
    wellKnown = `${tokenLine}\n`;
    const verified = json(await run(['verify', '--json']), 'verify');
    assert.equal(verified.origin_verified, true);
    const status = ok(await run(['status']), 'status');
    assert.match(status.stdout.split('\n')[0]!, /^env: dev \(/);
    assert.match(status.stdout, /GET \/joke/);
    const health = json(await run(['status', '--json']), 'status').endpoints[0].health;
    assert.equal(health.state, 'healthy', JSON.stringify(health));

    // Buy it: over the cap nothing is paid; within the cap the receipt comes back and the ledger has it.
    const tooDear = await run(['buy', `${origin}/joke`, '--max', '0.005', '--json']);
    assert.equal(tooDear.code, 1);
    assert.deepEqual(
      [errJson(tooDear).error_code, errJson(tooDear).details.requested_usd, errJson(tooDear).details.cap_usd],
      ['InsufficientBudgetError', '0.01', '0.005'],
    );
    const bought = json(await run(['buy', `${origin}/joke`, '--max', '0.05', '--json']), 'buy');
    assert.equal(bought.status, 200);
    assert.equal(bought.paid, true);
    assert.deepEqual(bought.body, { joke: 'two custodians walk into a bar' });
    assert.match(bought.receipt.txHash, /^0x[0-9a-f]{64}$/);
    assert.equal(bought.receipt.payer.toLowerCase(), init.wallets[0].address.toLowerCase());
    assert.equal(bought.receipt.amount, '0.01');
    const plain = ok(await run(['buy', `${origin}/joke`]), 'buy (text)');
    assert.equal(JSON.parse(plain.stdout).joke, 'two custodians walk into a bar');

    // An `upto` route with a $0.01 maximum that charges 40 % of it: the SDK reports the settlement, Treasury
    // verifies it on chain, and the rest is given back to the wallet's caps (`fund --permit2` approved Permit2).
    const meteredApp = new Koa();
    meteredApp.use(
      x402Koa({
        token: record.pat,
        price: '0.01',
        pay_to: payTo,
        schemes: ['upto'],
        facilitator_url: sandbox.info.facilitator_url,
        facilitator_address: sandbox.info.facilitator_address,
        api_url: sandbox.info.api_url,
        env: {},
      }),
    );
    meteredApp.use((ctx) => {
      setSettlementOverrides(ctx, { amount: '4000' });
      ctx.body = { tokens: 40 };
    });
    metered = http.createServer(meteredApp.callback());
    await new Promise<void>((resolve) => metered!.listen(0, '127.0.0.1', resolve));
    const meteredUrl = `http://127.0.0.1:${(metered.address() as AddressInfo).port}/joke`;
    const upto = json(await run(['buy', meteredUrl, '--max', '0.05', '--json']), 'buy (upto)');
    assert.deepEqual([upto.status, upto.receipt.amount, upto.settlement_error], [200, '0.004', undefined]);
    assert.deepEqual(upto.settlement, {
      transaction: upto.receipt.txHash,
      signed_max: '0.01',
      settled: '0.004',
      given_back: '0.006',
    });
    const uptoText = ok(await run(['buy', meteredUrl]), 'buy (upto, text)');
    assert.match(uptoText.stderr, /Settled 0\.004 of the 0\.01 USD maximum; 0\.006 USD given back/);

    // A wallet the agent holds but this machine never stored (made through the API): --wallet finds it on the
    // server, by address and by id, and pays from it; a wallet it does not hold is no_wallet, nothing paid.
    const agentRecord = JSON.parse(
      fs.readFileSync(path.join(env.XX_HOME!, 'agents', `${init.agent_id}.json`), 'utf8'),
    ) as { pat: string; wallets: unknown[] };
    const made = await fetch(`${sandbox.info.api_url}/v1/agents/${init.agent_id}/wallets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agentRecord.pat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'made elsewhere' }),
    });
    assert.equal(made.status, 201);
    const other = (await made.json()) as { id: string; address: string };
    const faucet = await fetch(sandbox.info.faucet_url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: other.address, amount_usd: '1' }),
    });
    assert.equal(faucet.status, 200, await faucet.clone().text());
    const byAddress = json(
      await run(['buy', `${origin}/joke`, '--wallet', other.address.toLowerCase(), '--json']),
      'buy --wallet <address>',
    );
    assert.equal(byAddress.receipt.payer.toLowerCase(), other.address.toLowerCase());
    const byId = json(await run(['buy', `${origin}/joke`, '--wallet', other.id, '--json']), 'buy --wallet <id>');
    assert.equal(byId.receipt.payer.toLowerCase(), other.address.toLowerCase());
    assert.equal(
      JSON.parse(fs.readFileSync(path.join(env.XX_HOME!, 'agents', `${init.agent_id}.json`), 'utf8')).wallets.length,
      agentRecord.wallets.length,
      'the lookup does not rewrite the stored agent',
    );
    const stranger = await run(['buy', `${origin}/joke`, '--wallet', `wal_${'0'.repeat(24)}`, '--json']);
    assert.equal(stranger.code, 1);
    assert.equal(errJson(stranger).error_code, 'no_wallet');
    const strangerAddress = await run(['buy', `${origin}/joke`, '--wallet', payTo, '--json']);
    assert.equal(errJson(strangerAddress).error_code, 'no_wallet');
    const malformed = await run(['buy', `${origin}/joke`, '--wallet', 'my-wallet', '--json']);
    assert.equal(malformed.code, 2);

    let csv = '';
    for (let i = 0; i < 50 && !csv.includes(bought.receipt.txHash); i++) {
      csv = ok(await run(['ledger', 'export', '--format', 'csv']), 'ledger export').stdout;
      if (!csv.includes(bought.receipt.txHash)) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(csv.includes(bought.receipt.txHash), csv);
    assert.match(csv, /^created_at,id,tx_hash,/);

    // Every --json the flow produced parsed above; the seed and the PATs never reached the terminal.
    const all = outputs.join('\n');
    assert.ok(!all.includes(mnemonic.split(' ').slice(0, 6).join(' ')), 'the seed is never printed');
    assert.ok(!all.includes(record.pat), 'the service PAT is never printed');
    assert.doesNotMatch(all, /xx_pat_/);
    assert.doesNotMatch(all, /as_[A-Za-z0-9]{20}/);
    for (const file of filesUnder(env.XX_HOME!)) assert.equal(fs.statSync(file).mode & 0o777, 0o600, `${file} is 0600`);
  });

  it('an expired or unknown session is renewed silently with the agent PAT; a revoked PAT is exit 1 with reauthenticate', async () => {
    const sessionFile = path.join(env.XX_HOME!, 'session.json');
    const stale = (file: string) => {
      const s = JSON.parse(fs.readFileSync(file, 'utf8'));
      fs.writeFileSync(file, JSON.stringify({ ...s, session: `as_${'0'.repeat(43)}` }), { mode: 0o600 });
    };
    stale(sessionFile);
    // A session-using command (an agent read: whoami and the agent's wallets); the PAT commands and the account's
    // sellers (`service list --remote`) sign the owner in again instead.
    const who = json(await xx(['whoami', '--session', '--json'], env), 'whoami --session after the session went stale');
    assert.deepEqual([who.source, who.session_origin], ['session', 'pat_exchange']);
    assert.notEqual(
      JSON.parse(fs.readFileSync(sessionFile, 'utf8')).session,
      `as_${'0'.repeat(43)}`,
      'a new session was saved',
    );
    const pats = json(await xx(['pat', 'list', '--json'], env), 'pat list (signs in again with the seed)');
    assert.ok(pats.pats.length >= 2);
    const sellers = json(
      await xx(['service', 'list', '--remote', '--json'], env),
      'service list --remote (signs in again with the seed)',
    );
    assert.ok(Array.isArray(sellers.sellers));

    const agent = json(await xx(['agent', 'show', '--json'], env), 'agent show');
    json(await xx(['pat', 'revoke', agent.pat_id, '--json'], env), 'pat revoke');
    stale(sessionFile);
    const refused = await xx(['whoami', '--session', '--json'], env);
    assert.equal(refused.code, 1, refused.stderr);
    const e = errJson(refused);
    assert.equal(e.error_code, 'reauthenticate');
    assert.equal(e.recovery.kind, 'reauthenticate');
  });

  it('--restore derives the BIP44 Base address of a known phrase; bad arguments exit 2 (JSON under --json)', async () => {
    const restoreEnv = {
      ...homeEnv(sandbox, 'restore'),
      XX_MNEMONIC: 'test test test test test test test test test test test junk',
    };
    const restored = json(
      await xx(['init', '--server', sandbox.info.api_url, '--restore', '--chain', 'base', '--json'], restoreEnv),
      'init --restore',
    );
    assert.equal(restored.addresses.base, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    assert.equal(restored.addresses.solana, undefined);

    const unknownOption = await xx(['whoami', '--bogus', '--json'], restoreEnv);
    assert.equal(unknownOption.code, 2);
    assert.equal(errJson(unknownOption).error_code, 'invalid_arguments');
    const badChain = await xx(['init', '--chain', 'dogecoin', '--json'], restoreEnv);
    assert.equal(badChain.code, 2);
    assert.match(errJson(badChain).user_message, /--chain/);
    const noTty = await xx(['wallet', 'export', '--json'], { ...restoreEnv, XX_KEYSTORE_PASSPHRASE: '' });
    assert.equal(noTty.code, 2, 'no confirmation possible without a TTY or --yes');
    assert.match(errJson(noTty).user_message, /--yes/);
    const exported = json(await xx(['wallet', 'export', '--yes', '--json'], restoreEnv), 'wallet export --yes');
    assert.equal(exported.mnemonic, 'test test test test test test test test test test test junk');

    // The rest of the account surface answers JSON too.
    const listed = json(await xx(['agent', 'list', '--json'], restoreEnv), 'agent list');
    assert.equal(listed.agents.length, 1);
    assert.equal(listed.agents[0].pat, undefined, 'no PAT in agent list');
    const added = json(
      await xx(['agent', 'wallets', 'add', '--label', 'second', '--json'], restoreEnv),
      'agent wallets add',
    );
    assert.match(added.address, /^0x[0-9a-fA-F]{40}$/);
    assert.equal(
      json(await xx(['agent', 'wallets', 'list', '--json'], restoreEnv), 'agent wallets list').wallets.length,
      2,
    );
    assert.equal(
      json(await xx(['agent', 'label', listed.agents[0].agent_id, 'renamed', '--json'], restoreEnv), 'agent label')
        .label,
      'renamed',
    );
    assert.equal(json(await xx(['profile', 'list', '--json'], restoreEnv), 'profile list').profiles[0].name, 'default');
    assert.equal(
      json(await xx(['wallet', 'list', '--json'], restoreEnv), 'wallet list').keystores[0].addresses.base,
      '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    );
    // The code a browser asked with at /dashboard/cli-handoff (any 22+ URL-safe characters to the CLI).
    const state = 'c2FuZGJveC1oYW5kb2ZmLXN0YXRl';
    const handoff = json(await xx(['dashboard', '--print', '--json', '--state', state], restoreEnv), 'dashboard');
    assert.match(handoff.url, new RegExp(`/cli-handoff#pat=xx_pat_[A-Za-z0-9_-]+&state=${state}$`));
    const printed = json(await xx(['fund', '--testnet', '--print', '--json'], restoreEnv), 'fund --print');
    assert.equal(printed.funded, false);
    assert.ok(printed.addresses.length >= 1);
    const minted = json(
      await xx(['pat', 'create', '--label', 'ci', '--daily-cap', '1', '--json'], restoreEnv),
      'pat create',
    );
    assert.match(minted.pat, /^xx_pat_/);
    const login = json(await xx(['login', '--profile', 'ci', '--json'], restoreEnv, minted.pat), 'login (stdin)');
    assert.equal(login.scope_type, 'agent');
    assert.equal(
      json(await xx(['profile', 'switch', 'default', '--json'], restoreEnv), 'profile switch').active,
      'default',
    );
  });

  it('init without flags prompts on a terminal (pseudo-terminal via script)', async function () {
    if (spawnSync('script', ['--version']).status !== 0) this.skip();
    const ttyEnv = homeEnv(sandbox, 'tty');
    delete (ttyEnv as Record<string, string | undefined>).XX_KEYSTORE_PASSPHRASE;
    const command = `${process.execPath} ${XX_BIN} init --server ${sandbox.info.api_url}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: path.dirname(path.dirname(XX_BIN)),
      env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...ttyEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    // Each prompt within 30 s on an idle machine, stretched by its load (../support/load-scaled-deadline.ts).
    const waitFor = async (re: RegExp) => {
      const deadline = loadScaledDeadline(30_000);
      while (!re.test(out) && !deadline.passed()) await new Promise((r) => setTimeout(r, 100));
      assert.match(out, re, `no ${re} after ${deadline.describe()}:\n${out}`);
    };
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitFor(/New keystore passphrase/);
    child.stdin.write(`${PASSPHRASE}\r`);
    await waitFor(/Repeat the passphrase/);
    child.stdin.write(`${PASSPHRASE}\r`);
    assert.equal(await exit, 0, out);
    assert.match(out, /Signed in to/);
    assert.ok(!out.includes(PASSPHRASE), 'the passphrase is not echoed');
    const ks = keystoreSchema.parse(
      JSON.parse(fs.readFileSync(path.join(ttyEnv.XX_HOME!, 'seeds', 'default.json'), 'utf8')),
    );
    assert.equal((await openMnemonic(ks, PASSPHRASE)).split(' ').length, 24);
  });
});

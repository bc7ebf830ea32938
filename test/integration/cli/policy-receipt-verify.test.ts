/**
 * `xx wallet policy verify` — the real binary against a real test Treasury (HTTP, PostgreSQL, SoftHSM, the signer with
 * its own policy store) reached through a loopback HTTP proxy that plays a compromised API: it may answer a request
 * itself, or rewrite an answer, before the CLI sees it.
 * (a) honest: after `xx init` signed version 1, the receipt verifies `in_force` against the CLI's own record;
 * (b) the audit's F1: `xx wallet policy set` signs version 2, the API withholds it from the signer and answers that it
 *     applied it — `verify` says `withheld` and exits 1, while the signer indeed still holds version 1;
 * (c) a receipt the API edited (its statement says version 2) fails: it does not recover to the wallet's address;
 * (d) a receipt replayed from an earlier run (another nonce) fails, though its signature is genuine;
 * and without a local record, verify needs the address from the owner (exit 2), never the API's.
 * (e) the owner signs version 2 elsewhere (the same seed, the same signing helper, straight to the API — as the
 *     dashboard does): against this machine's older record verify says `mismatch`; with `--expect-version 2
 *     --expect-hash` it says `in_force` and leaves the record as it was; a wrong hash at version 2 is `mismatch`;
 * (f) version 3 signed elsewhere and withheld by the API: `--expect-version 3` says `withheld`;
 * (g) out-of-bounds flag values exit 2 with `invalid_argument`, before anything is asked of the API.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { walletPolicySchema, type WalletPolicy } from '../../../policy/policy-schema.js';
import { evmAccount } from '../../../src/cli/commands/account/hd-addresses.js';
import { putOwnerSignedPolicy } from '../../../src/cli/commands/account/owner-signed-policy.js';
import { keystoreSchema, openMnemonic } from '../../../src/cli/commands/account/seed-keystore.js';
import { seedSignIn } from '../../../src/cli/commands/account/seed-sign-in.js';
import { ApiClient } from '../../../src/cli/core/api-client.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { startTamperingProxy, withholdSignedPolicy } from './tampering-proxy.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';

describe('xx wallet policy verify: receipts signed by the wallet key (CLI subprocess, HTTP, SoftHSM)', function () {
  this.timeout(240_000);
  let proxy: Awaited<ReturnType<typeof startTamperingProxy>>;
  let t: TestTreasury;
  let env: ReturnType<typeof xxHomeFor>;
  let init: any;
  let walletId: string;
  /** A genuine receipt as the API answered it in (a), replayed in (d). */
  let captured: string | undefined;
  /** This machine's record of version 1, as `xx init` wrote it. */
  let recordV1: string;
  /** The policy hash of the version 2 the owner signed elsewhere in (e). */
  let hashV2: string;

  before(async () => {
    proxy = await startTamperingProxy();
    t = await startTestTreasury({ extraEnv: { TREASURY_PUBLIC_URL: proxy.url, TREASURY_AUTH_CACHE_MS: '0' } });
    proxy.target(Number(new URL(t.baseUrl).port));
    env = xxHomeFor('policy-verify', proxy.url, PASSPHRASE);
    init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    walletId = init.wallets[0].id;
  });
  afterEach(() => proxy.reset());
  after(async () => {
    await proxy?.close();
    await t?.stop();
  });

  /** The CLI's record of the last document it signed for the wallet (src/cli/commands/account/signed-policy-record.ts). */
  const recordFile = () => path.join(env.HOME, '.xx', 'signed-policies', `${walletId}.json`);
  const isReceipt = (method: string, url: string) => method === 'GET' && url.includes('/policy/receipt?');

  it('(a) in force: the receipt recovers to the address init signed for, at the version signed', async () => {
    recordV1 = fs.readFileSync(recordFile(), 'utf8');
    const record = JSON.parse(recordV1);
    assert.equal(record.address, init.wallets[0].address);
    assert.equal(record.version, 1);
    proxy.set((method, url) => (isReceipt(method, url) ? { rewrite: (text) => (captured = text) } : {}));
    const out = stdoutJson(await runXx(['wallet', 'policy', 'verify', '--json'], env), 'wallet policy verify');
    assert.deepEqual(
      [out.status, out.compared_with, out.address_source, out.signer.version, out.expected.version],
      ['in_force', 'local_record', 'local_record', 1, 1],
    );
    assert.equal(out.signer.policy_hash, record.policy_hash);
    assert.equal(out.signer.authority.address.toLowerCase(), init.addresses.base.toLowerCase());
    assert.ok(captured);
  });

  it('(d) a receipt replayed from before fails on its nonce', async () => {
    proxy.set((method, url) => (isReceipt(method, url) ? { answer: JSON.parse(captured!) } : {}));
    const run = await runXx(['wallet', 'policy', 'verify', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const err = stderrJson(run, 'replayed');
    assert.deepEqual([err.error_code, err.details.reason], ['policy_receipt_invalid', 'nonce']);
  });

  it('(c) a receipt the API edited fails: it does not recover to the wallet address', async () => {
    proxy.set((method, url) =>
      isReceipt(method, url)
        ? {
            rewrite: (text) => {
              const body = JSON.parse(text);
              body.statement = body.statement.replace('version: 1', 'version: 2');
              return JSON.stringify(body);
            },
          }
        : {},
    );
    const run = await runXx(['wallet', 'policy', 'verify', '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const err = stderrJson(run, 'edited');
    assert.deepEqual([err.error_code, err.details.reason], ['policy_receipt_invalid', 'signature']);
  });

  it('(b) F1: a tightening the API withholds while answering "applied" is detected as withheld', async () => {
    // The compromised API keeps the signed document and answers as if the signer had taken it.
    const withheld = withholdSignedPolicy(proxy, walletId, init.addresses.base);
    const set = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--max-per-payment', '0.5', '--json'], env),
      'wallet policy set',
    );
    assert.equal(set.owner_policy.version, 2, 'the owner is told version 2 applied');
    assert.equal(withheld.body.version, 2);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: init.wallets[0].address });
    assert.equal(held.current?.version, 1, 'the signer never got it');
    proxy.reset();

    const run = await runXx(['wallet', 'policy', 'verify', walletId, '--json'], env);
    assert.equal(run.code, 1, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual([out.status, out.signer.version, out.expected.version], ['withheld', 1, 2]);
    assert.equal(stderrJson(run, 'withheld').error_code, 'policy_withheld');
    const text = await runXx(['wallet', 'policy', 'verify', walletId], env);
    assert.equal(text.code, 1);
    assert.match(text.stdout, /status: +withheld/);
  });

  it('without a local record it needs the address from the owner, never the API', async () => {
    fs.rmSync(recordFile());
    const run = await runXx(['wallet', 'policy', 'verify', walletId, '--json'], env);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(stderrJson(run, 'no record').error_code, 'wallet_address_unknown');
    // With the owner's word for the address, compared with what the API claims (the signer's own version 1).
    const out = stdoutJson(
      await runXx(['wallet', 'policy', 'verify', walletId, '--address', init.wallets[0].address, '--json'], env),
      'verify --address',
    );
    assert.deepEqual([out.status, out.compared_with, out.address_source], ['in_force', 'api', 'flag']);
  });

  /**
   * Signs `edit` of the policy the API holds as the owner, elsewhere than this CLI: the seed from the keystore `xx init`
   * sealed, a sign-in of its own and the signing helper `xx` uses (no local record is written). Its policy hash.
   */
  async function signElsewhere(edit: Partial<WalletPolicy>): Promise<string> {
    const keystore = keystoreSchema.parse(
      JSON.parse(fs.readFileSync(path.join(env.XX_SEEDS_DIR!, 'default.json'), 'utf8')),
    );
    const mnemonic = await openMnemonic(keystore, PASSPHRASE);
    const { grant } = await seedSignIn(new URL(proxy.url), mnemonic, 'both');
    const owner = new ApiClient({ baseUrl: proxy.url, token: grant.session });
    const shown = stdoutJson(await runXx(['wallet', 'policy', 'show', walletId, '--json'], env), 'policy show');
    const policy = walletPolicySchema.parse({ ...shown.policy, ...edit });
    const row = await t.db.knex('wallets').where({ id: walletId }).first('account_id');
    const wallet = { id: walletId, address: init.wallets[0].address, account_id: String(row.account_id) };
    try {
      await putOwnerSignedPolicy(owner, { evm: evmAccount(mnemonic) }, wallet, policy);
    } finally {
      await owner.request('POST', '/v1/auth/logout').catch(() => undefined);
    }
    return policyDocumentHash(policy);
  }

  it("(e) a version signed elsewhere: in force against the owner's word, the local record left as it was", async () => {
    fs.writeFileSync(recordFile(), recordV1);
    hashV2 = await signElsewhere({ per_tx_cap_usd: '0.25' } as Partial<WalletPolicy>);
    const held = await t.app.services.signer.call('get_wallet_policy', { address: init.wallets[0].address });
    assert.equal(held.current?.version, 2, 'the signer holds the document signed elsewhere');

    // This machine's record is older than what the signer holds: no way to tell it from a swap.
    const stale = await runXx(['wallet', 'policy', 'verify', walletId, '--json'], env);
    assert.equal(stale.code, 1, stale.stderr);
    assert.deepEqual([JSON.parse(stale.stdout).status, JSON.parse(stale.stdout).expected.version], ['mismatch', 1]);

    const run = await runXx(
      ['wallet', 'policy', 'verify', walletId, '--expect-version', '2', '--expect-hash', hashV2, '--json'],
      env,
    );
    const out = stdoutJson(run, 'verify --expect-version 2');
    assert.deepEqual(
      [out.status, out.compared_with, out.address_source, out.signer.version, out.expected],
      ['in_force', 'owner_flags', 'local_record', 2, { version: 2, policy_hash: hashV2 }],
    );
    assert.equal(out.signer.policy_hash, hashV2);
    assert.equal(fs.readFileSync(recordFile(), 'utf8'), recordV1, "the owner's word is not a document signed here");

    // The version alone: in force, the hash the signer holds shown.
    const text = await runXx(['wallet', 'policy', 'verify', walletId, '--expect-version', '2'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /status: +in_force/);
    assert.ok(text.stdout.includes(hashV2));

    // Another hash at version 2.
    const wrong = `0x${'ab'.repeat(32)}`;
    const bad = await runXx(
      ['wallet', 'policy', 'verify', walletId, '--expect-version', '2', '--expect-hash', wrong, '--json'],
      env,
    );
    assert.equal(bad.code, 1, bad.stderr);
    assert.deepEqual(
      [JSON.parse(bad.stdout).status, stderrJson(bad, 'wrong hash').error_code],
      ['mismatch', 'policy_mismatch'],
    );

    // Without a local record the address still comes from the owner, never the API.
    fs.rmSync(recordFile());
    const noRecord = await runXx(['wallet', 'policy', 'verify', walletId, '--expect-version', '2', '--json'], env);
    assert.equal(noRecord.code, 2, noRecord.stderr);
    assert.equal(stderrJson(noRecord, 'no record').error_code, 'wallet_address_unknown');
    const flagged = stdoutJson(
      await runXx(
        [
          'wallet',
          'policy',
          'verify',
          walletId,
          '--expect-version',
          '2',
          '--expect-hash',
          hashV2,
          '--address',
          init.wallets[0].address,
          '--json',
        ],
        env,
      ),
      'verify --expect-version --address',
    );
    assert.deepEqual([flagged.status, flagged.address_source], ['in_force', 'flag']);
    assert.equal(fs.existsSync(recordFile()), false, "no record is made from the owner's word");
  });

  it('(f) a version signed elsewhere and withheld by the API: --expect-version says withheld', async () => {
    const withheld = withholdSignedPolicy(proxy, walletId, init.addresses.base);
    const hashV3 = await signElsewhere({ per_tx_cap_usd: '0.1' } as Partial<WalletPolicy>);
    assert.equal(withheld.body.version, 3);
    proxy.reset();
    const run = await runXx(
      [
        'wallet',
        'policy',
        'verify',
        walletId,
        '--expect-version',
        '3',
        '--expect-hash',
        hashV3,
        '--address',
        init.wallets[0].address,
        '--json',
      ],
      env,
    );
    assert.equal(run.code, 1, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.deepEqual(
      [out.status, out.signer.version, out.signer.policy_hash, out.expected.version],
      ['withheld', 2, hashV2, 3],
    );
    assert.equal(stderrJson(run, 'withheld').error_code, 'policy_withheld');
  });

  it('(g) flag values out of bounds exit 2 with invalid_argument, naming the flag', async () => {
    const address = ['--address', init.wallets[0].address];
    const HASH = `0x${'cd'.repeat(32)}`;
    const cases: [string[], string][] = [
      [['--expect-version', '0'], '--expect-version'],
      [['--expect-version', '281474976710657'], '--expect-version'],
      [['--expect-version', '2.5'], '--expect-version'],
      [['--expect-version', '2', '--expect-hash', HASH.toUpperCase().replace('0X', '0x')], '--expect-hash'],
      [['--expect-version', '2', '--expect-hash', HASH.slice(0, 40)], '--expect-hash'],
      [['--expect-hash', HASH], '--expect-hash'],
    ];
    let asked = 0;
    proxy.set((method, url) => {
      if (isReceipt(method, url)) asked++;
      return {};
    });
    for (const [flags, flag] of cases) {
      const run = await runXx(['wallet', 'policy', 'verify', walletId, ...address, ...flags, '--json'], env);
      assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
      const err = stderrJson(run, flags.join(' '));
      assert.deepEqual([err.error_code, err.details.flag], ['invalid_argument', flag]);
    }
    assert.equal(asked, 0, 'no receipt is asked for');
  });
});

/**
 * `xx init` gives what it creates safe defaults, shows them, and lets flags change them — through the real
 * `xx` binary against a real test Treasury (HTTP, PostgreSQL, SoftHSM):
 * - by default the agent PAT has a daily cap of 10 USD and the new managed wallet the policy
 *   { per_tx_cap_usd: 1, daily_cap_usd: 10 }; --json and the text output both show them, the server holds them;
 * - --daily-cap, --max-per-payment and --daily-limit change them; `none` removes each explicitly;
 * - --policy <file> sets the whole wallet policy from a JSON file; combined with the per-rule flags, or
 *   with a bad amount or policy, init exits 2 before anything is created;
 * - an existing wallet's policy is shown and left as it is.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { assertOk, runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';

describe('xx init: safe defaults for a new agent (CLI subprocess, HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(240_000);
  const { t, forwarder } = useForwardedTreasury({ TREASURY_AUTH_CACHE_MS: '0' });
  const home = (name: string) => xxHomeFor(name, forwarder.url, PASSPHRASE);

  /** What the server holds: the PAT's daily cap (micro-USD) and the wallet's policy. */
  async function held(patId: string, walletId: string) {
    const pat = await t.db.knex('api_tokens').where({ id: patId }).first('daily_cap_micro');
    const wallet = await t.db.knex('wallets').where({ id: walletId }).first('policy');
    return { capMicro: pat.daily_cap_micro as string | null, policy: wallet.policy as Record<string, unknown> };
  }

  it('defaults: the agent PAT capped at 10 USD a day, the wallet at 1 USD a payment and 10 USD a day; shown and held by the server', async () => {
    const env = home('defaults');
    const out = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    assert.equal(out.pat_daily_cap_usd, '10');
    assert.equal(out.wallets.length, 1);
    assert.deepEqual(out.wallet_policy, { per_tx_cap_usd: '1', daily_cap_usd: '10' });
    assert.equal(out.wallet_policy_applied, true);
    assert.deepEqual(await held(out.pat_id, out.wallets[0].id), {
      capMicro: '10000000',
      policy: { per_tx_cap_usd: '1', daily_cap_usd: '10' },
    });

    // Again on the same account: the existing wallet keeps its policy (shown), the new PAT gets the default cap.
    const again = assertOk(await runXx(['init', '--chain', 'base', '--max-per-payment', '3'], env), 'init again');
    assert.match(again.stdout, /daily cap 10 USD/);
    assert.match(again.stdout, /per payment 1 USD, 10 USD a day.*unchanged/);
    assert.deepEqual((await held(out.pat_id, out.wallets[0].id)).policy, { per_tx_cap_usd: '1', daily_cap_usd: '10' });
  });

  /** `xx init` on a new seed for Base with the agent PAT's daily cap and the wallet's two limits given. */
  const initWithCaps = (caps: { dailyCap: string; maxPerPayment: string; dailyLimit: string }) => [
    'init',
    '--new-seed',
    '--chain',
    'base',
    '--daily-cap',
    caps.dailyCap,
    '--max-per-payment',
    caps.maxPerPayment,
    '--daily-limit',
    caps.dailyLimit,
  ];

  it('flags change the defaults, shown in the text output', async () => {
    const env = home('flags');
    const run = assertOk(
      await runXx(initWithCaps({ dailyCap: '25', maxPerPayment: '0.5', dailyLimit: '5' }), env),
      'init with flags',
    );
    assert.match(run.stdout, /Agent PAT pat_[0-9a-f]{24} .*daily cap 25 USD/);
    assert.match(run.stdout, /Wallet policy: per payment 0\.5 USD, 5 USD a day/);
    assert.match(run.stdout, /xx pat update pat_[0-9a-f]{24} --daily-cap/);
    const patId = /Agent PAT (pat_[0-9a-f]{24})/.exec(run.stdout)![1]!;
    const walletId = /Managed wallet: (\S+)/.exec(run.stdout)![1]!;
    assert.deepEqual(await held(patId, walletId), {
      capMicro: '25000000',
      policy: { per_tx_cap_usd: '0.5', daily_cap_usd: '5' },
    });
  });

  it('none removes each default explicitly', async () => {
    const out = stdoutJson(
      await runXx(
        [...initWithCaps({ dailyCap: 'none', maxPerPayment: 'none', dailyLimit: 'none' }), '--json'],
        home('none'),
      ),
      'init none',
    );
    assert.equal(out.pat_daily_cap_usd, null);
    assert.deepEqual(out.wallet_policy, {});
    assert.deepEqual(await held(out.pat_id, out.wallets[0].id), { capMicro: null, policy: {} });
    const partial = stdoutJson(
      await runXx(['init', '--new-seed', '--chain', 'base', '--daily-limit', 'none', '--json'], home('partial')),
      'init partial',
    );
    assert.deepEqual([partial.pat_daily_cap_usd, partial.wallet_policy], ['10', { per_tx_cap_usd: '1' }]);
  });

  it('--policy <file> sets the whole wallet policy', async () => {
    const env = home('policy-file');
    const file = path.join(env.HOME, 'policy.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        per_tx_cap_usd: '2',
        weekly_cap_usd: '20',
        counterparty_allowlist: ['0x209693bc6afc0c5328ba36faf03c514ef312287c'],
      }),
    );
    const out = stdoutJson(
      await runXx(['init', '--new-seed', '--chain', 'base', '--policy', file, '--json'], env),
      'init --policy',
    );
    const expected = {
      per_tx_cap_usd: '2',
      weekly_cap_usd: '20',
      counterparty_allowlist: ['0x209693Bc6afc0C5328bA36FaF03C514EF312287C'],
    };
    assert.deepEqual(out.wallet_policy, expected);
    assert.deepEqual((await held(out.pat_id, out.wallets[0].id)).policy, expected);
  });

  it('bad values exit 2 naming the flag, before anything is created', async () => {
    const accountsBefore = Number((await t.db.knex('accounts').count({ n: '*' }))[0]!.n);
    const env = home('bad');
    const file = path.join(env.HOME, 'bad-policy.json');
    fs.writeFileSync(file, JSON.stringify({ per_tx_cap_usd: '0' }));
    const notJson = path.join(env.HOME, 'not-json.json');
    fs.writeFileSync(notJson, '{ per_tx_cap_usd: 1');
    for (const [args, flag] of [
      [['--daily-cap', 'ten'], '--daily-cap'],
      [['--daily-cap', '0'], '--daily-cap'],
      [['--max-per-payment', '-1'], '--max-per-payment'],
      [['--daily-limit', '1.0000001'], '--daily-limit'],
      [['--policy', file], '--policy'],
      [['--policy', notJson], '--policy'],
      [['--policy', path.join(env.HOME, 'missing.json')], '--policy'],
      [['--policy', file, '--max-per-payment', '1'], '--policy'],
    ] as const) {
      const run = await runXx(['init', '--new-seed', '--chain', 'base', ...args, '--json'], env);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.equal(stderrJson(run, args.join(' ')).details?.flag, flag, run.stderr);
    }
    assert.equal(
      Number((await t.db.knex('accounts').count({ n: '*' }))[0]!.n),
      accountsBefore,
      'no account was created',
    );
    assert.ok(
      !fs.existsSync(env.XX_SEEDS_DIR!) || fs.readdirSync(env.XX_SEEDS_DIR!).length === 0,
      'no keystore was written',
    );
  });
});

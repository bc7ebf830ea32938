/**
 * The owner allows a wallet's key to be destroyed from the `xx` CLI, and `set` signs only what the owner
 * asked for — the real binary against a real test Treasury (HTTP, PostgreSQL, SoftHSM, the signer with its
 * own policy store), on the wallet `xx init` made (its signed policy, version 1, without the flag):
 * - `xx wallet policy set` refuses to build on a copy of the current policy the API's database rewrote (a
 *   looser cap, `allow_key_destruction: true`) — `policy_copy_mismatch`, nothing signed — and `--file` still signs;
 * - `xx wallet revoke` and `xx wallet rotate` are refused (409 `key_destruction_not_allowed`) with the command
 *   that allows it as the next step; `xx wallet policy set --key-destruction allow` signs the flag (and
 *   `refuse` withdraws it), after which `xx wallet revoke` ends the wallet.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { policyDocumentHash } from '../../../policy/signed-policy.js';
import { useForwardedTreasury } from '../../support/forwarded-treasury.js';
import { runXx, stderrJson, stdoutJson, xxHomeFor } from './xx-process.js';

const PASSPHRASE = 'correct horse battery staple';
/** What `xx init` gives (and signs for) the wallet it makes. */
const INIT_POLICY = { per_tx_cap_usd: '1', daily_cap_usd: '10' };

describe('xx: allowing key destruction, and the checked copy of the current policy (CLI subprocess, HTTP, PostgreSQL, SoftHSM, signer policy store)', function () {
  this.timeout(240_000);
  const { t, forwarder } = useForwardedTreasury({ TREASURY_AUTH_CACHE_MS: '0' });
  let env: ReturnType<typeof xxHomeFor>;
  let walletId: string;

  /** What the signer holds for the wallet, as `xx wallet policy show` reads it (the API asks the signer). */
  const held = async () =>
    stdoutJson(await runXx(['wallet', 'policy', 'show', walletId, '--json'], env), 'wallet policy show').owner_policy;
  const hashOf = (policy: Record<string, unknown>) => policyDocumentHash(walletPolicySchema.parse(policy));
  const signingPats = () =>
    t.db.knex('api_tokens').where({ label: 'xx owner-signed policy' }).count<{ n: string }[]>({
      n: '*',
    });

  before(async () => {
    env = xxHomeFor('key-destruction', forwarder.url, PASSPHRASE);
    const init = stdoutJson(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
    assert.equal(init.wallet_policy_signing_error, null);
    walletId = init.wallets[0].id;
  });

  it('set refuses to build on a rewritten copy of the current policy (policy_copy_mismatch, nothing signed); --file signs', async () => {
    const before = await held();
    assert.deepEqual([before.version, before.policy_hash], [1, hashOf(INIT_POLICY)]);
    const patsBefore = await signingPats();
    // A compromised API database: its copy loosened, and claiming the owner allows key destruction.
    await t.db
      .knex('wallets')
      .where({ id: walletId })
      .update({ policy: { per_tx_cap_usd: '1000', allow_key_destruction: true } });
    for (const flags of [
      ['--max-per-payment', '1'],
      ['--key-destruction', 'refuse'],
    ]) {
      const run = await runXx(['wallet', 'policy', 'set', walletId, ...flags, '--json'], env);
      assert.equal(run.code, 1, run.stderr);
      const err = stderrJson(run, `set ${flags.join(' ')}`);
      assert.equal(err.error_code, 'policy_copy_mismatch');
      assert.match(err.user_message, /--file/);
      assert.deepEqual([err.details.version, err.details.policy_hash], [1, before.policy_hash]);
    }
    const text = await runXx(['wallet', 'policy', 'set', walletId, '--max-per-payment', '1'], env);
    assert.equal(text.code, 1);
    assert.match(text.stderr, /not the owner-signed one the signer holds \(version 1\).*\(policy_copy_mismatch\)/s);
    assert.deepEqual(await held(), before, 'the signer holds version 1 still');
    assert.deepEqual(await signingPats(), patsBefore, 'the owner was not signed in to sign');

    // The whole policy from a file needs no copy: signed as given.
    const file = path.join(env.HOME, 'policy.json');
    fs.writeFileSync(file, JSON.stringify({ per_tx_cap_usd: '1', daily_cap_usd: '5' }));
    const set = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--file', file, '--json'], env),
      'set --file',
    );
    assert.deepEqual(set.policy, { per_tx_cap_usd: '1', daily_cap_usd: '5' });
    assert.deepEqual([set.owner_policy.version, set.owner_policy.policy_hash], [2, hashOf(set.policy)]);
  });

  it('revoke and rotate are refused (409) with the command that allows it; --key-destruction allow signs the flag, then revoke ends the wallet', async () => {
    const unconfirmed = await runXx(['wallet', 'revoke', walletId, '--json'], env);
    assert.equal(unconfirmed.code, 2, unconfirmed.stderr);
    assert.equal(stderrJson(unconfirmed, 'revoke without --yes').details?.flag, '--yes');

    const hint = `xx wallet policy set ${walletId} --key-destruction allow`;
    const refused = await runXx(['wallet', 'revoke', walletId, '--abandon-balance', '--yes', '--json'], env);
    assert.equal(refused.code, 1, refused.stderr);
    const err = stderrJson(refused, 'revoke');
    assert.deepEqual([err.error_code, err.status], ['key_destruction_not_allowed', 409]);
    assert.deepEqual([err.details.rule, err.details.current_version, err.details.next_version], ['owner_policy', 2, 3]);
    assert.deepEqual(err.recovery, { kind: 'allow_key_destruction', cli_command: hint });
    const rotate = await runXx(['wallet', 'rotate', walletId, '--abandon-balance', '--yes'], env);
    assert.equal(rotate.code, 1, rotate.stderr);
    assert.match(rotate.stderr, /does not allow its key to be destroyed.*\(key_destruction_not_allowed, HTTP 409\)/s);
    assert.ok(rotate.stderr.includes(`\nNext: ${hint}\n`), rotate.stderr);

    const allowed = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--key-destruction', 'allow', '--json'], env),
      'set --key-destruction allow',
    );
    const withFlag = { per_tx_cap_usd: '1', daily_cap_usd: '5', allow_key_destruction: true };
    assert.deepEqual(allowed.policy, withFlag);
    assert.deepEqual([allowed.owner_policy.version, allowed.owner_policy.policy_hash], [3, hashOf(withFlag)]);
    // Withdrawn, the API refuses again; allowed again, it revokes.
    const withdrawn = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--key-destruction', 'refuse', '--json'], env),
      'set --key-destruction refuse',
    );
    assert.deepEqual(
      [withdrawn.policy, withdrawn.owner_policy.version],
      [{ per_tx_cap_usd: '1', daily_cap_usd: '5' }, 4],
    );
    const again = await runXx(['wallet', 'revoke', walletId, '--abandon-balance', '--yes', '--json'], env);
    assert.equal(stderrJson(again, 'revoke after refuse').error_code, 'key_destruction_not_allowed');
    const reallowed = stdoutJson(
      await runXx(['wallet', 'policy', 'set', walletId, '--key-destruction', 'allow', '--json'], env),
      'set --key-destruction allow (again)',
    );
    assert.deepEqual([reallowed.policy, reallowed.owner_policy.version], [withFlag, 5]);

    const revoked = stdoutJson(
      await runXx(['wallet', 'revoke', walletId, '--abandon-balance', '--yes', '--json'], env),
      'revoke',
    );
    assert.deepEqual([revoked.id, revoked.status], [walletId, 'revoked']);
    const row = await t.db.knex('wallets').where({ id: walletId }).first('status');
    assert.equal(row.status, 'revoked');
    const minted = await t.db.knex('api_tokens').where({ label: 'xx wallet revoke' }).select('revoked_at');
    assert.ok(minted.length >= 1 && minted.every((r) => r.revoked_at !== null), 'the revoke PATs are revoked');
  });
});

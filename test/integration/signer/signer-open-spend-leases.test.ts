/**
 * Spends of wallets without a signed policy, recorded after their signature leaves (docs/adr/0012, "Wallets
 * without a signed policy: recorded after release"), through two real signer processes sharing one store, as a
 * compromised API could drive them:
 *  - a policy signed through the process that queued the spends counts every one of them at its first decision;
 *  - a policy signed through another process: once set_wallet_policy has answered, the process that held a
 *    lease on the wallet decides its next payment under the policy (its lease has run out), and the spends it
 *    released before count;
 *  - a wallet without a policy: every released spend reaches the store within a lease — from its first payment on,
 *    since the statement that made its row (at its creation) saw it without a policy.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { outcome, signedPolicy } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

/** Longer than the default, so that a lease outlives a slow set_wallet_policy on a loaded machine. */
const LEASE_MS = 3000;
const env = { TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: String(LEASE_MS) };
const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));

describe('spends of wallets without a signed policy, recorded after release (two signer processes, one store)', function () {
  this.timeout(180_000);
  const { owner, firstClient, second, store, account, storedSum } = useTwoSignersOnOneStore({
    prefix: 'treasury-open-spends',
    env,
  });

  it('a policy signed through the same process counts the spends it had queued at its first decision', async () => {
    const { ops, wallet } = await account();
    // Released under the lease the wallet's creation gave, each recorded after release.
    await ops[0]!.sign(wallet, usd(0.3));
    await Promise.all([ops[0]!.sign(wallet, usd(0.3)), ops[0]!.sign(wallet, usd(0.3))]);
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, wallet.address, { daily_cap_usd: '1' }));
    assert.equal(await storedSum(wallet.address), 900_000n, 'the queued spends were written before the policy');
    assert.equal(await outcome(ops[0]!.sign(wallet, usd(0.2))), 'policy_denied');
    assert.equal(await outcome(ops[0]!.sign(wallet, usd(0.1))), 'signed');
  });

  it('a policy signed through another process: once it answered, the leaseholder decides under it', async () => {
    const { ops, wallet } = await account();
    const document = await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.7' });
    await ops[0]!.sign(wallet, usd(0.3));
    // Released under the first process's lease, which its write renews; the policy follows at once.
    await ops[0]!.sign(wallet, usd(0.3));
    await second.client.call('set_wallet_policy', document);
    assert.equal(
      await outcome(ops[0]!.sign(wallet, usd(0.5))),
      'policy_denied',
      'the first process no longer signs the wallet unchecked',
    );
    assert.equal(await outcome(ops[1]!.sign(wallet, usd(0.2))), 'policy_denied', 'both earlier spends count');
    assert.equal(await outcome(ops[1]!.sign(wallet, usd(0.1))), 'signed');
  });

  it("a new wallet's first payment is released before its spend is written: the store's row, made without a policy, gave the lease", async () => {
    const { ops, wallet } = await account();
    // Nothing can be written to the spends while this lock is held: a payment recorded before release would wait.
    const holder = new pg.Client({ connectionString: store.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE signer_spends IN EXCLUSIVE MODE');
      const first = await Promise.race([
        outcome(ops[0]!.sign(wallet, usd(0.25))),
        new Promise((r) => setTimeout(() => r('waited on the store'), LEASE_MS / 2)),
      ]);
      assert.equal(first, 'signed');
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    for (let waited = 0; (await storedSum(wallet.address)) < 250_000n; waited += 20) {
      assert.ok(waited < LEASE_MS, 'written within a lease');
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('a wallet without a policy: every released spend is in the store within a lease', async () => {
    const { ops, wallet } = await account();
    const signed = await Promise.all(Array.from({ length: 60 }, (_, i) => outcome(ops[i % 2]!.sign(wallet, '10000'))));
    assert.deepEqual([...new Set(signed)], ['signed']);
    for (let waited = 0; (await storedSum(wallet.address)) < 600_000n; waited += 20) {
      assert.ok(waited < LEASE_MS, 'written within a lease');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(await storedSum(wallet.address), 600_000n);
  });
});

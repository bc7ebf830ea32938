/**
 * How the signer's store commits spends (docs/adr/0012-owner-signed-policies.md, "The store's two paths"),
 * through two real signer processes sharing one store, as a compromised API could drive them at once:
 *  - on a wallet with a signed policy, each payment is decided on a snapshot and committed only if the wallet's
 *    spend counter (raised by every commit and every policy change) still holds: many payments racing through both processes stop exactly at
 *    the cap, and every signature's spend is in the store;
 *  - on a wallet without one, spends are recorded by one statement with no decision, ordered before a policy
 *    signed while they run: once the policy is signed, its window counts every one of them.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import type { SignerError } from '../../../signer/protocol/signer-client.js';
import { signedPolicy } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

const CENT = '10000';

/** The outcomes of settled payments: how many were signed, and the codes of the refusals. */
function tally(outcomes: PromiseSettledResult<unknown>[]) {
  const codes = outcomes.flatMap((o) =>
    o.status === 'rejected' ? [(o.reason as SignerError).code ?? String(o.reason)] : [],
  );
  return { signed: outcomes.length - codes.length, codes: [...new Set(codes)] };
}

describe("the signer store's commits under concurrency (two signer processes, one store)", function () {
  this.timeout(180_000);
  const { owner, firstClient, second, store, db, account, storedSum } = useTwoSignersOnOneStore({
    prefix: 'treasury-spend-commit',
  });

  it('a signed wallet: 300 payments of 0.01 racing through both processes sign exactly the 200 its 2.00 day allows', async () => {
    const { ops, wallet } = await account();
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, wallet.address, { daily_cap_usd: '2' }));
    // Both processes learn the policy before the race, so every payment takes the snapshot path.
    await ops[0]!.sign(wallet, '1');
    await ops[1]!.sign(wallet, '1');
    const outcomes = await Promise.allSettled(Array.from({ length: 300 }, (_, i) => ops[i % 2]!.sign(wallet, CENT)));
    const { signed, codes } = tally(outcomes);
    assert.equal(signed, 199, 'the day holds 2.00: the two probes of one raw unit each leave room for 199 cents');
    assert.deepEqual(codes, ['policy_denied']);
    assert.equal(await storedSum(wallet.address), 199n * 10_000n + 2n, "every signature's spend is in the store");
  });

  it('two processes deciding on the same snapshot: the second commit finds the counter moved, decides again, and refuses', async () => {
    const { ops, wallet } = await account();
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.6' }));
    await ops[0]!.sign(wallet, '1');
    await ops[1]!.sign(wallet, '1');
    // Hold the wallet's spend counter: both processes read the same state and decide, and both commits then wait here.
    const holder = new pg.Client({ connectionString: store.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM signer_spend_counters WHERE address = $1 FOR UPDATE', [
        wallet.address.toLowerCase(),
      ]);
      const racing = [ops[0]!.sign(wallet, '500000'), ops[1]!.sign(wallet, '500000')].map((p) =>
        p.then(
          () => 'signed',
          (err: SignerError) => err.code,
        ),
      );
      for (let waited = 0; ; waited += 20) {
        // Asked on another connection: a transaction sees pg_stat_activity as it was when it first looked.
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if (rows[0]!.n >= 2) break;
        assert.ok(waited < 20_000, 'both commits wait on the counter');
        await new Promise((r) => setTimeout(r, 20));
      }
      await holder.query('COMMIT');
      assert.deepEqual((await Promise.all(racing)).sort(), ['policy_denied', 'signed']);
    } finally {
      await holder.end();
    }
    assert.equal(await storedSum(wallet.address), 500_002n);
  });

  it('a wallet without a policy: spends racing with the policy being signed all count in its window', async () => {
    const { ops, wallet } = await account();
    const racing = Array.from({ length: 120 }, (_, i) => ops[i % 2]!.sign(wallet, CENT));
    await new Promise((r) => setTimeout(r, 50));
    await second.client.call('set_wallet_policy', await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.5' }));
    const { signed } = tally(await Promise.allSettled(racing));
    // A spend released under a lease (signer/owner-policy/open-spend-leases.ts) is written a few ms after.
    for (let waited = 0; (await storedSum(wallet.address)) < BigInt(signed) * 10_000n && waited < 2000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(await storedSum(wallet.address), BigInt(signed) * 10_000n, "every signature's spend is in the store");
    // Fill the day: whatever was signed before the policy counts, so the total stops at 0.50 or at what was
    // already signed, whichever is more.
    let more = 0;
    for (;;) {
      const r = await ops[more % 2]!.sign(wallet, CENT).then(
        () => 'signed',
        (err: SignerError) => err.code,
      );
      if (r !== 'signed') {
        assert.equal(r, 'policy_denied');
        break;
      }
      more++;
    }
    assert.equal(signed + more, Math.max(50, signed), 'the window counted every spend signed before the policy');
  });
});

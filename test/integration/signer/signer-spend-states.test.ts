/**
 * A signed wallet's spend state remembered between payments (signer/owner-policy/spend-state-cache.ts), through a
 * real signer process and its PostgreSQL store: after a wallet's first decision, the next ones are decided on the
 * state the last commit left (one round trip instead of two), and what is decided stays what the store would
 * decide — a cap still stops exactly, a velocity window that slid on is decided on the store again when the
 * remembered count cannot tell (and on its aged count when it can), and a state another process moved is never
 * committed on.
 */
import assert from 'node:assert/strict';
import { findFreePort } from '../../support/signer-harness.js';
import { outcome, readMetric, signedPolicy } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

const CENT = '10000';
const STATES = 'treasury_signer_spend_states_total';

describe("a signed wallet's spend state remembered between payments", function () {
  this.timeout(180_000);
  let firstMetrics = 0;
  before(async () => {
    firstMetrics = await findFreePort();
  });
  const { owner, second, signedWallet, storedCount } = useTwoSignersOnOneStore({
    prefix: 'treasury-spend-states',
    firstEnv: () => ({ TREASURY_SIGNER_METRICS_PORT: String(firstMetrics) }),
  });

  const states = async () => ({
    remembered: await readMetric(firstMetrics, STATES, 'source="remembered"'),
    read: await readMetric(firstMetrics, STATES, 'source="read"'),
    readOn: await readMetric(firstMetrics, STATES, 'source="velocity_read_on"'),
  });

  it('payments one after another are decided on the remembered state after the first, and stop exactly at the cap', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.05' });
    const before = await states();
    const results: string[] = [];
    for (let i = 0; i < 7; i++) results.push(await outcome(ops[0]!.sign(wallet, CENT)));
    const after = await states();
    assert.deepEqual(results, ['signed', 'signed', 'signed', 'signed', 'signed', 'policy_denied', 'policy_denied']);
    assert.equal(await storedCount(wallet.address), 5);
    // The first payment reads; the next four are decided on what the last commit left; each refusal made on a
    // remembered state is made again on a read before it stands.
    assert.ok(after.remembered - before.remembered >= 4, `remembered ${after.remembered - before.remembered}`);
    assert.ok(after.read - before.read <= 3, `read ${after.read - before.read}`);
  });

  it('a velocity window that slid on allows again', async () => {
    const { ops, wallet } = await signedWallet({ velocity_cap: { max_count: 2, window_seconds: 2 } });
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_denied');
    await new Promise((r) => setTimeout(r, 2_200));
    // Both payments the window counted have left it, as the remembered count knows (it holds their times).
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await storedCount(wallet.address), 3);
  });

  /**
   * A wallet under `policy` paid three rounds of `count` payments one after another, every one signed, each round
   * followed by a pause of `pauseMs` (the window slides on); the spend states counted over the last two rounds.
   */
  const threeRounds = async (policy: Parameters<typeof signedWallet>[0], count: number, pauseMs: number) => {
    const { ops, wallet } = await signedWallet(policy);
    const round = async () => {
      const results: string[] = [];
      for (let i = 0; i < count; i++) results.push(await outcome(ops[0]!.sign(wallet, CENT)));
      assert.deepEqual(new Set(results), new Set(['signed']));
      await new Promise((r) => setTimeout(r, pauseMs));
    };
    await round();
    const before = await states();
    await round();
    await round();
    const after = await states();
    return {
      wallet,
      read: after.read - before.read,
      remembered: after.remembered - before.remembered,
      readOn: after.readOn - before.readOn,
    };
  };

  it('a wallet paid up to its velocity cap window after window decides on its aged count, without reading the store again', async () => {
    // Each window's three spends left it before the next three: the remembered count loses them as they leave.
    const { wallet, read, remembered } = await threeRounds(
      { velocity_cap: { max_count: 3, window_seconds: 1 } },
      3,
      1_200,
    );
    assert.equal(read, 0, 'no payment read its state again');
    assert.equal(remembered, 6);
    assert.equal(await storedCount(wallet.address), 9);
  });

  it('a window with more spends than its remembered times is read on once they left, not counted again', async () => {
    // 40 spends a window, the cap: the remembered state knows the times of 32, counts the other 8 without them.
    // Once the 32 known spends left, the 8 unknown ones did too: read on, the count is 0, not 8 (which would have
    // refused the round's last 8 on memory and read the store again for each refusal).
    const { wallet, read, readOn } = await threeRounds(
      { velocity_cap: { max_count: 40, window_seconds: 2 } },
      40,
      2_300,
    );
    assert.equal(read, 0, 'no payment read its state in full');
    assert.ok(readOn >= 2, `read on ${readOn} times`);
    assert.equal(await storedCount(wallet.address), 120);
  });

  it('a state another process moved is not committed on: payments alternating between two processes stop at the cap', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.10' });
    const results: string[] = [];
    for (let i = 0; i < 14; i++) results.push(await outcome(ops[i % 2]!.sign(wallet, CENT)));
    assert.equal(results.filter((r) => r === 'signed').length, 10);
    assert.deepEqual(results.slice(10), ['policy_denied', 'policy_denied', 'policy_denied', 'policy_denied']);
    assert.equal(await storedCount(wallet.address), 10);
  });

  it('a new policy is not decided on the state remembered under the old one', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '1' });
    for (let i = 0; i < 3; i++) assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    // Signed through the other process: this one learns of it only from the store.
    await second.client.call(
      'set_wallet_policy',
      await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.04' }, 2),
    );
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_denied');
    assert.equal(await storedCount(wallet.address), 4);
  });
});

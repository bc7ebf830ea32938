/**
 * The buyer PAT daily cap, enforced atomically in the pay transaction: an agent PAT pays with its agent's
 * wallets; the payment that crosses the cap answers 429 MGMT_6014 with the exact recovery fields and records
 * nothing; the cap spans the agent's wallets; after the (injected) UTC midnight it passes again. Agent PATs
 * cannot manage wallets.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const requirements = (amount: string) => paymentRequirements({ amount });

describe('buyer PAT daily cap (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let now = new Date();

  before(async () => {
    t = await startTestTreasury({ clock: () => now });
  });
  after(async () => {
    await t?.stop();
  });

  /**
   * Signs a new owner in, mints its Treasury PAT and an agent PAT (`buyerFields` beside the scope: its cap),
   * and creates one wallet per label with the Treasury PAT; returns the session, both PATs and the wallet ids.
   */
  async function buyerWithWallets(buyerFields: { daily_cap_usd?: string }, labels: string[]) {
    const { session } = await signInWithNewKey(t);
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    const buyer = (
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', ...buyerFields } })
    ).body;
    const wallets = await Promise.all(
      labels.map(
        async (label) =>
          (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { label } })).body.id as string,
      ),
    );
    return { session, treasuryPat, buyer, wallets };
  }

  /** A payment of `amount` (micro-USDC) from the wallet with the PAT `token`. */
  const payWith = (token: string, walletId: string, amount: string) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, { token, body: { payment_requirements: requirements(amount) } });

  it('429 MGMT_6014 with the raise_pat_cap recovery when a payment crosses the cap; resets at UTC midnight', async () => {
    now = new Date(); // the sign-in message carries the real time; the injected clock must be near it
    const {
      session,
      treasuryPat,
      buyer,
      wallets: [w1, w2],
    } = await buyerWithWallets({ daily_cap_usd: '1' }, ['a', 'b']);
    const listed = await t.request('GET', '/v1/wallets', { token: buyer.pat });
    assert.deepEqual(listed.body.wallets.map((w: { id: string }) => w.id).sort(), [w1!, w2!].sort());
    assert.equal((await t.request('POST', '/v1/wallets', { token: buyer.pat, body: {} })).status, 403);
    assert.equal((await t.request('POST', `/v1/wallets/${w1}/rotate`, { token: buyer.pat })).status, 403);
    assert.equal((await t.request('PUT', `/v1/wallets/${w1}/policy`, { token: buyer.pat, body: {} })).status, 403);

    now = new Date(Date.UTC(2026, 10, 22, 23, 59, 0));
    const pay = (walletId: string, amount: string) => payWith(buyer.pat, walletId, amount);
    assert.equal((await pay(w1!, '600000')).status, 200);
    assert.equal((await pay(w2!, '400000')).status, 200, 'exactly at the cap, across two wallets');
    const over = await pay(w2!, '500000');
    assert.equal(over.status, 429);
    assert.equal(over.body.error_code, 'MGMT_6014');
    assert.equal(typeof over.body.user_message, 'string');
    assert.deepEqual(over.body.recovery, {
      kind: 'raise_pat_cap',
      settings_url: `http://treasury.test/dashboard/settings/pats/${buyer.id}`,
      // A human path: the CLI command signs the owner in again with the seed before it changes the cap.
      cli_command: `xx pat update ${buyer.id} --daily-cap <usd>`,
      current_cap_usd: '1',
      attempted_amount_usd: '0.5',
    });
    assert.equal(
      (await t.db.knex('authorizations').whereIn('wallet_id', [w1!, w2!])).length,
      2,
      'nothing recorded for the refused payment',
    );

    // the same wallet through the Treasury PAT is not limited by the buyer PAT's cap
    assert.equal((await payWith(treasuryPat, w2!, '500000')).status, 200);

    now = new Date(Date.UTC(2026, 10, 23, 0, 0, 0));
    assert.equal((await pay(w2!, '500000')).status, 200, 'the cap resets at 00:00 UTC');

    await t.request('PATCH', `/v1/pats/${buyer.id}`, { token: session, body: { daily_cap_usd: '0.6' } });
    const lowered = await pay(w1!, '200000');
    assert.equal(lowered.status, 429);
    assert.equal(lowered.body.recovery.current_cap_usd, '0.6');
  });

  it('under a race across the wallets of one agent, exactly the payments the cap fits pass; the rest are 429 and record nothing', async () => {
    now = new Date();
    const { buyer, wallets } = await buyerWithWallets({ daily_cap_usd: '0.13' }, ['a', 'b', 'c', 'd']);
    now = new Date(Date.UTC(2026, 10, 25, 12, 0, 0));
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => payWith(buyer.pat, wallets[i % 4]!, '10000')),
    );
    assert.equal(
      results.filter((r) => r.status === 200).length,
      13,
      JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.body ?? ''),
    );
    assert.equal(results.filter((r) => r.status === 429 && r.body.error_code === 'MGMT_6014').length, 27);
    assert.equal((await t.db.knex('authorizations').whereIn('wallet_id', wallets)).length, 13);
    const total = await t.db.knex('pat_spend_totals').where({ token_id: buyer.id, day: '2026-11-25' }).first();
    assert.equal(String(total.spent_micro), '130000');
  });

  it('an agent PAT without a cap (as xx init mints it) pays on the group-commit path; its daily total counts every payment, and a cap set later counts them', async () => {
    now = new Date();
    const { session, buyer, wallets } = await buyerWithWallets({}, ['a', 'b', 'c', 'd']);
    now = new Date(Date.UTC(2026, 10, 24, 12, 0, 0));
    const pay = (walletId: string, amount: string) => payWith(buyer.pat, walletId, amount);
    const decisionsPerWrite = async () => {
      const text = (await t.request('GET', '/metrics')).body as string;
      return Number(text.match(/treasury_pay_decision_write_batch_size_count (\d+)/)?.[1] ?? 0);
    };
    const writesBefore = await decisionsPerWrite();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => pay(wallets[i % 4]!, '10000')));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok((await decisionsPerWrite()) - writesBefore >= 1, 'the decisions went through the group-commit writer');
    const total = await t.db.knex('pat_spend_totals').where({ token_id: buyer.id, day: '2026-11-24' }).first();
    assert.equal(String(total.spent_micro), '400000', 'forty payments of 0.01 across four wallets');

    assert.equal(
      (await t.request('PATCH', `/v1/pats/${buyer.id}`, { token: session, body: { daily_cap_usd: '0.5' } })).status,
      200,
    );
    assert.equal((await pay(wallets[0]!, '100000')).status, 200, '0.4 + 0.1: at the cap');
    const over = await pay(wallets[1]!, '1');
    assert.equal(over.status, 429);
    assert.equal(over.body.error_code, 'MGMT_6014');
  });

  it('a capped PAT reads its day once, then pays on the total the process remembers through the group commit; no room left reads again and answers 429; a payment given back makes it read again', async () => {
    now = new Date();
    const { session, buyer, wallets } = await buyerWithWallets({ daily_cap_usd: '1' }, ['a', 'b']);
    now = new Date(Date.UTC(2026, 10, 26, 12, 0, 0));
    const pay = (walletId: string, amount: string) => payWith(buyer.pat, walletId, amount);
    const metric = async (pattern: RegExp) =>
      Number(((await t.request('GET', '/metrics')).body as string).match(pattern)?.[1] ?? 0);
    const checks = async () => ({
      read: await metric(/treasury_pat_cap_checks_total\{source="read"\} (\d+)/),
      remembered: await metric(/treasury_pat_cap_checks_total\{source="remembered"\} (\d+)/),
      statements: await metric(/treasury_pay_decision_write_batch_size_count (\d+)/),
    });

    /** How many cap checks read the day, and how many were decided on the remembered total, from `a` to `b`. */
    const counted = (a: { read: number; remembered: number }, b: { read: number; remembered: number }) => [
      b.read - a.read,
      b.remembered - a.remembered,
    ];
    const start = await checks();
    assert.equal((await pay(wallets[0]!, '100000')).status, 200);
    const afterFirst = await checks();
    assert.deepEqual(counted(start, afterFirst), [1, 0], 'the first payment reads the day under the PAT lock');

    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => pay(wallets[i % 2]!, '50000')));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await pay(wallets[1]!, '500000')).status, 200, '0.1 + 8 × 0.05 + 0.5: exactly at the cap');
    const atCap = await checks();
    assert.deepEqual(counted(afterFirst, atCap), [0, 9], 'decided on the remembered total');
    assert.ok(atCap.statements - afterFirst.statements >= 1, 'written by the group-commit writer');

    const over = await pay(wallets[0]!, '1');
    assert.equal(over.status, 429);
    assert.equal(over.body.error_code, 'MGMT_6014');
    assert.equal((await checks()).read - atCap.read, 1, 'no room left: the 429 comes from a read');
    const day = await t.db.knex('pat_spend_totals').where({ token_id: buyer.id, day: '2026-11-26' }).first();
    assert.deepEqual([String(day.spent_micro), String(day.cap_micro)], ['1000000', '1000000']);
    assert.equal((await t.db.knex('authorizations').whereIn('wallet_id', wallets)).length, 10);

    // Room again under a raised cap; the signer gone: the payment is given back, and what the process
    // remembered (which counted it) is dropped, so the next payment reads the day again.
    assert.equal(
      (await t.request('PATCH', `/v1/pats/${buyer.id}`, { token: session, body: { daily_cap_usd: '2' } })).status,
      200,
    );
    assert.equal((await pay(wallets[0]!, '100000')).status, 200);
    const beforeStop = await checks();
    await t.signer.stop();
    assert.equal((await pay(wallets[0]!, '100000')).status, 503);
    assert.equal((await pay(wallets[1]!, '100000')).status, 503);
    const stopped = await checks();
    assert.deepEqual(counted(beforeStop, stopped), [1, 1], 'after the release, the next payment read the day');
    const released = await t.db.knex('pat_spend_totals').where({ token_id: buyer.id, day: '2026-11-26' }).first();
    assert.equal(String(released.spent_micro), '1100000', 'both unsigned payments given back');
  });
});

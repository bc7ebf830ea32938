/**
 * Payment history over HTTP (PostgreSQL, SoftHSM): GET /v1/wallets/{id}/payments and GET
 * /v1/agents/{id}/payments list each authorization with its status, amount, payee, resource, decision id and
 * tx hash when known (an upto settlement, or a seller ledger row verified on chain for the same payer and network),
 * newest first, paged with limit/cursor; another account's bearer gets 404, never rows.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { paymentPageSchema } from '../../../src/shared/api-responses/payment-history-responses.js';

describe('payment history (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let shift = 0;

  before(async () => {
    t = await startTestTreasury({ clock: () => new Date(Date.now() + shift) });
  });
  after(async () => {
    await t?.stop();
  });

  /** A signed-in owner with a Treasury PAT, an agent PAT and `labels.length` wallets. */
  async function buyer(labels: string[]) {
    const grant = await signInWithNewKey(t);
    const treasuryPat = (
      await t.request('POST', '/v1/pats', { token: grant.session, body: { scope_type: 'treasury' } })
    ).body.pat as string;
    const agentPat = (await t.request('POST', '/v1/pats', { token: grant.session, body: { scope_type: 'agent' } })).body
      .pat as string;
    const wallets: string[] = [];
    for (const label of labels)
      wallets.push((await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { label } })).body.id);
    return { ...grant, treasuryPat, agentPat, wallets };
  }

  it('lists a wallet’s and an agent’s payments with status, amount, payee, resource, decision and tx hash; pages them', async () => {
    const a = await buyer(['one', 'two']);
    const [w1, w2] = a.wallets as [string, string];
    const pay = async (walletId: string, amount: string, resource: string) => {
      const res = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
        token: a.agentPat,
        body: { payment_requirements: paymentRequirements({ amount, resource }) },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { authorization_id: string; decision_id: string };
    };
    const first = await pay(w1, '10000', 'https://seller.test/a');
    const second = await pay(w1, '20000', 'https://seller.test/b');
    const third = await pay(w2, '30000', 'https://seller.test/c');
    assert.match(first.authorization_id, /^auth_/);

    const mine = await t.request('GET', `/v1/wallets/${w1}/payments`, { token: a.agentPat });
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    const page = paymentPageSchema.parse(mine.body);
    assert.deepEqual(
      page.payments.map((p) => [p.id, p.status, p.amount_usd, p.resource, p.decision_id]),
      [
        [second.authorization_id, 'signed', '0.02', 'https://seller.test/b', second.decision_id],
        [first.authorization_id, 'signed', '0.01', 'https://seller.test/a', first.decision_id],
      ],
      'newest first, only this wallet',
    );
    assert.equal(page.payments[0]!.payee.toLowerCase(), SELLER_ADDRESS.toLowerCase());
    assert.equal(page.payments[0]!.tx_hash, null);
    assert.equal(page.next_cursor, null);

    // A settlement Treasury recorded gives the row its transaction; a released one says so.
    const tx = `0x${'ab'.repeat(32)}`;
    await t.db
      .knex('authorizations')
      .where({ id: first.authorization_id })
      .update({ settlement_tx: tx, settled_raw: '10000', settled_at: new Date() });
    await t.db.knex('authorizations').where({ id: second.authorization_id }).update({ status: 'released' });
    const after = paymentPageSchema.parse(
      (await t.request('GET', `/v1/wallets/${w1}/payments`, { token: a.treasuryPat })).body,
    );
    assert.deepEqual(
      after.payments.map((p) => [p.status, p.tx_hash, p.tx_hash_source, p.settled_usd]),
      [
        ['released', null, null, null],
        ['settled', tx, 'settlement', '0.01'],
      ],
    );

    // Across the agent's wallets, paged one at a time with the cursor.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request(
        'GET',
        `/v1/agents/${a.agent_id}/payments?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        { token: a.agentPat },
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const p = paymentPageSchema.parse(res.body);
      assert.equal(p.payments.length, 1);
      seen.push(p.payments[0]!.id);
      cursor = p.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [third.authorization_id, second.authorization_id, first.authorization_id]);
    // The owner's session reads the same list.
    const owner = await t.request('GET', `/v1/agents/${a.agent_id}/payments`, { token: a.session });
    assert.equal(owner.status, 200);
    assert.equal(owner.body.payments.length, 3);

    // Once its window has closed, a signed payment nobody settled is expired.
    shift = 10 * 60_000;
    try {
      const later = paymentPageSchema.parse(
        (await t.request('GET', `/v1/wallets/${w2}/payments`, { token: a.agentPat })).body,
      );
      assert.equal(later.payments[0]!.status, 'expired');
    } finally {
      shift = 0;
    }

    // A seller ledger row naming the payment gives it its transaction once Treasury verified it on chain, and
    // only for the payer and network of the authorization.
    const seller = (await t.request('POST', '/v1/sellers', { token: a.session, body: { name: 'History Seller' } }))
      .body;
    const payer = (await t.request('GET', `/v1/wallets/${w2}`, { token: a.agentPat })).body.address as string;
    const ledgerRow = (n: number, fields: Record<string, unknown>) => ({
      id: `led_${n.toString(16).padStart(24, '0')}`,
      seller_id: seller.seller_id,
      tx_hash: `0x${n.toString(16).padStart(64, '0')}`,
      payer,
      amount_micro: '30000',
      network: 'eip155:84532',
      payout_mode: 'direct',
      status: 'verified',
      log_index: n,
      authorization_id: third.authorization_id,
      created_at: new Date(),
      ...fields,
    });
    await t.db
      .knex('ledger_entries')
      .insert([
        ledgerRow(0xa1, { payer: SELLER_ADDRESS }),
        ledgerRow(0xa2, { status: 'pending', reason: 'awaiting_verification' }),
        ledgerRow(0xa3, { network: 'eip155:8453' }),
      ]);
    const w2Page = async () =>
      paymentPageSchema.parse((await t.request('GET', `/v1/wallets/${w2}/payments`, { token: a.agentPat })).body)
        .payments[0]!;
    assert.deepEqual(
      [(await w2Page()).status, (await w2Page()).tx_hash],
      ['signed', null],
      'no verified row of this payer',
    );
    await t.db.knex('ledger_entries').insert(ledgerRow(0xa4, { payer: payer.toLowerCase() }));
    const settled = await w2Page();
    assert.deepEqual(
      [settled.status, settled.tx_hash, settled.tx_hash_source],
      ['settled', `0x${(0xa4).toString(16).padStart(64, '0')}`, 'seller_ledger'],
    );
  });

  it("another account's bearer gets 404, not the payments; bad paging is 400", async () => {
    const a = await buyer(['mine']);
    const [w] = a.wallets as [string];
    assert.equal(
      (
        await t.request('POST', `/v1/wallets/${w}/pay`, {
          token: a.agentPat,
          body: { payment_requirements: paymentRequirements({ amount: '1000' }) },
        })
      ).status,
      200,
    );
    const b = await buyer(['theirs']);
    for (const token of [b.agentPat, b.treasuryPat]) {
      const res = await t.request('GET', `/v1/wallets/${w}/payments`, { token });
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'wallet_not_found');
      assert.equal(JSON.stringify(res.body).includes('auth_'), false);
    }
    for (const token of [b.agentPat, b.session]) {
      const res = await t.request('GET', `/v1/agents/${a.agent_id}/payments`, { token });
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'agent_not_found');
    }
    // Their own lists are empty, not someone else's.
    const theirs = await t.request('GET', `/v1/agents/${b.agent_id}/payments`, { token: b.agentPat });
    assert.deepEqual(theirs.body, { payments: [], next_cursor: null });
    assert.equal((await t.request('GET', `/v1/wallets/${w}/payments`)).status, 401);
    for (const q of ['limit=0', 'limit=501', 'cursor=%25%25', 'extra=1'])
      assert.equal((await t.request('GET', `/v1/wallets/${w}/payments?${q}`, { token: a.agentPat })).status, 400, q);
    const foreignCursor = Buffer.from(`${new Date().toISOString()}|wal_${'0'.repeat(24)}`).toString('base64url');
    assert.equal(
      (await t.request('GET', `/v1/wallets/${w}/payments?cursor=${foreignCursor}`, { token: a.agentPat })).status,
      400,
      'a cursor of another list',
    );
  });
});

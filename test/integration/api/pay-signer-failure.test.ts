/**
 * Reserve, then sign: when the signer cannot sign, the reservation made under the wallet lock is released —
 * the spend is given back (the daily cap's headroom is whole again), the row is marked released with its
 * Idempotency-Key freed, the release is in the audit chain, and no signature exists anywhere.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';

describe('pay path when the signer fails', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let token: string;

  before(async () => {
    t = await startTestTreasury();
    token = (await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'agent', owner_id: 'payer' } })).body.api_key;
  });
  after(async () => {
    await t?.stop();
  });

  it('a reservation whose signature never came is released: spend given back, audited, key reusable', async () => {
    const w = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body as { id: string };
    const body = { payment_requirements: paymentRequirements({ amount: '600000' }) };
    const ok = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));

    await t.signer.stop();
    const failed = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body: { payment_requirements: paymentRequirements({ amount: '400000' }) }, headers: { 'Idempotency-Key': 'lost-signer-1' } });
    assert.equal(failed.status, 503, JSON.stringify(failed.body));
    assert.equal(failed.body.error_code, 'signer_unavailable');

    const rows = await t.db.knex('authorizations').where({ wallet_id: w.id }).orderBy('created_at');
    assert.deepEqual(rows.map((r) => r.status), ['signed', 'released']);
    assert.equal(rows[1].signature, null);
    assert.equal(rows[1].idempotency_key, null, 'the Idempotency-Key is free for a retry');
    const released = await t.db.knex('audit_events').where({ chain_key: w.id, event_type: 'payment.released' });
    assert.equal(released.length, 1);
    assert.equal(released[0].payload.authorization_id, rows[1].id);

    // Only the signed 0.6 still counts: 0.4 fits under the 1 USD daily cap again.
    const day = await t.db.knex('wallet_spend_totals').where({ wallet_id: w.id, window_kind: 'day' }).first();
    assert.equal(String(day.spent_micro), '600000');
    const dry = await t.request('POST', `/v1/wallets/${w.id}/policy/evaluate`, { token, body: { to: SELLER_ADDRESS, amount_usd: '0.4' } });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.equal(dry.body.allowed, true);

    // The same key can be used again; it reserves anew (and fails again while the signer is down).
    const retry = await t.request('POST', `/v1/wallets/${w.id}/pay`, { token, body: { payment_requirements: paymentRequirements({ amount: '400000' }) }, headers: { 'Idempotency-Key': 'lost-signer-1' } });
    assert.equal(retry.status, 503);
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: w.id, status: 'released' })).length, 2);
  });
});

/**
 * POST /v1/wallets/{id}/pay with the buyer's x402 `payment_identifier` (src/api/pay/payment-identifier-key.ts),
 * through HTTP with the real signer and PostgreSQL: the same identifier with the same terms answers the
 * authorization it recorded (one authorizations row, one spend), with other terms 409
 * `payment_identifier_conflict` (nothing signed), beside a different Idempotency-Key header 400
 * `payment_identifier_mismatch`; another wallet's identifier is its own; hostile identifiers are 400 at the
 * schema, changing nothing.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { daySpentMicro } from '../../support/spend-totals.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;
const ID = 'pay_0f3c2a9b8e7d4c6b8a1e2f3d4c5b6a79';

describe('pay with a payment_identifier (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let token: string;

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'payer');
  });
  after(async () => {
    await t?.stop();
  });

  async function wallet() {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: {} } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string };
  }
  const pay = (walletId: string, amount: string, id: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount, maxTimeoutSeconds: 300 }), payment_identifier: id },
      headers,
    });
  const rows = (walletId: string) => t.db.knex('authorizations').where({ wallet_id: walletId }).select('id', 'status');

  it('the same identifier and terms answer the recorded authorization: one row, one spend', async () => {
    const w = await wallet();
    const first = await pay(w.id, '250000', ID);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const again = await pay(w.id, '250000', ID);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.authorization_id, first.body.authorization_id);
    assert.equal(again.body.signature, first.body.signature);
    assert.deepEqual(again.body.authorization, first.body.authorization);
    // The header may name the same key.
    const withHeader = await pay(w.id, '250000', ID, { 'idempotency-key': ID });
    assert.equal(withHeader.body.authorization_id, first.body.authorization_id);
    assert.equal((await rows(w.id)).length, 1);
    assert.equal(await daySpentMicro(t.db.knex, w.id), '250000');
  });

  it('the same identifier with other terms is 409 payment_identifier_conflict, nothing signed', async () => {
    const w = await wallet();
    const id = 'pay_conflict_0123456789abcdef';
    assert.equal((await pay(w.id, '100000', id)).status, 200);
    const other = await pay(w.id, '200000', id);
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.equal(other.body.error_code, 'payment_identifier_conflict');
    assert.equal(other.body.payment_identifier, id);
    assert.equal((await rows(w.id)).length, 1);
    assert.equal(await daySpentMicro(t.db.knex, w.id), '100000');
  });

  it('an Idempotency-Key header other than the identifier is 400 payment_identifier_mismatch', async () => {
    const w = await wallet();
    const res = await pay(w.id, '100000', 'pay_mismatch_0123456789abcdef', { 'idempotency-key': 'order-1' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'payment_identifier_mismatch');
    assert.equal((await rows(w.id)).length, 0);
  });

  it("another wallet's identifier is its own purchase", async () => {
    const [a, b] = [await wallet(), await wallet()];
    const id = 'pay_two_wallets_0123456789ab';
    const fromA = await pay(a.id, '100000', id);
    const fromB = await pay(b.id, '100000', id);
    assert.equal(fromA.status, 200);
    assert.equal(fromB.status, 200);
    assert.notEqual(fromA.body.authorization_id, fromB.body.authorization_id);
  });

  it('hostile identifiers are 400 at the schema, changing nothing', async () => {
    const w = await wallet();
    const values = [
      ...(hostile.identifier ?? []),
      ...(hostile.any ?? []),
      'pay_short_12345', // 15 characters
      `pay_${'a'.repeat(125)}`, // 129 characters
      'pay_with.dot_0123456789',
      'pay_with:colon_0123456789',
      'pay_üñïcode_0123456789',
    ].filter((v) => v !== undefined && v !== null);
    for (const value of values) {
      const res = await pay(w.id, '1000', value);
      assert.equal(res.status, 400, `${JSON.stringify(value)}: ${res.status} ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error_code, 'invalid_request', JSON.stringify(value));
    }
    assert.equal((await rows(w.id)).length, 0);
  });
});

/**
 * One tenant's bad payment does not break another's writes. Tenant A pays in bursts while tenant B sends
 * payments the columns cannot hold (an amount above 2^63 − 1 raw units, a resource holding NUL or a lone
 * surrogate): B hears 400 with a stable code — refused by the schema through HTTP, and by the write path
 * itself when such a payment is handed to the pay service past the schema — every payment of A is signed,
 * and none of A's writes is taken again or decided on a fresh read (its remembered snapshot survives). The
 * same holds for a row that breaks a constraint: B proposing a nonce it used already hears 409.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';

const HOSTILE_REQUIREMENTS: Array<Record<string, unknown>> = [
  { amount: '9223372036854775808' },
  { amount: '18446744073709551616' },
  { resource: 'https://seller.example/a\u0000b' },
  { resource: 'https://seller.example/\ud800' },
  { description: 'x\u0000' },
  { description: '\udfff' },
  { resource: 'https://seller.example/\u0085' },
  { resource: 'https://seller.example/\u007f' },
];

describe("pay write isolation: one tenant's bad payment cannot fail another's writes", function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let a: { token: string; walletId: string; accountId: string };
  let b: { token: string; walletId: string; accountId: string };

  before(async () => {
    // The subject is the API's shared write statements, which form only when A's signatures come back together;
    // a signer keeping a policy store takes each wallet's signatures one at a time (a row lock and a commit in
    // its own database per signature), so A's writes would rarely share a statement with B's. Without the store
    // the signer answers as before, and the sharing this suite needs happens.
    t = await startTestTreasury({ policyStore: false });
    const tenant = async (owner: string) => {
      const minted = await t.request('POST', '/v1/treasury', {
        token: t.adminToken,
        body: { owner_type: 'agent', owner_id: owner },
      });
      const wallet = await t.request('POST', '/v1/wallets', { token: minted.body.api_key, body: { label: owner } });
      assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
      return {
        token: minted.body.api_key as string,
        walletId: wallet.body.id as string,
        accountId: minted.body.id as string,
      };
    };
    a = await tenant('tenant-a');
    b = await tenant('tenant-b');
  });
  after(async () => {
    await t?.stop();
  });

  const metric = async (pattern: RegExp) => {
    const text = String((await t.request('GET', '/metrics')).body);
    return [...text.matchAll(new RegExp(pattern.source, 'g'))].reduce((sum, m) => sum + Number(m[1]), 0);
  };
  const retries = () => metric(/treasury_pay_conflict_retries_total\{[^}]*\} (\d+)/);
  const reads = () => metric(/treasury_pay_snapshots_total\{source="read"\} (\d+)/);
  const payA = () =>
    t.request('POST', `/v1/wallets/${a.walletId}/pay`, {
      token: a.token,
      body: { payment_requirements: paymentRequirements({ amount: '1000' }) },
    });

  it("through HTTP: B's hostile payments answer 400 while A's concurrent payments are all signed, none retried or read again", async () => {
    assert.equal((await payA()).status, 200); // A's snapshot is now remembered
    const [retriesBefore, readsBefore] = [await retries(), await reads()];
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        ...Array.from({ length: 12 }, () => payA()),
        ...HOSTILE_REQUIREMENTS.map((o) =>
          t.request('POST', `/v1/wallets/${b.walletId}/pay`, {
            token: b.token,
            body: { payment_requirements: paymentRequirements(o) },
          }),
        ),
      ]);
      const answersA = results.slice(0, 12);
      const answersB = results.slice(12);
      for (const r of answersA) assert.equal(r.status, 200, JSON.stringify(r.body));
      for (const [i, r] of answersB.entries()) {
        assert.equal(
          r.status,
          400,
          `${JSON.stringify(HOSTILE_REQUIREMENTS[i])} → ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`,
        );
        assert.equal(r.body.error_code, 'invalid_request');
      }
    }
    assert.equal(await retries(), retriesBefore, 'no payment was taken again');
    assert.equal(await reads(), readsBefore, 'A kept deciding on its remembered snapshot');
    assert.equal(
      Number((await t.db.knex('authorizations').where({ wallet_id: b.walletId }).count({ n: '*' }))[0]!.n),
      0,
    );
    assert.equal((await verifyAuditChain(t.db.knex, a.walletId)).ok, true);
  });

  it("past the schema: a row PostgreSQL refuses fails alone with 400 unstorable_value; A's writes in the same statements commit", async () => {
    const pay = t.app.services.pay;
    assert.equal((await payA()).status, 200);
    const [retriesBefore, readsBefore] = [await retries(), await reads()];
    const isolatedBefore = await metric(/treasury_pay_write_isolation_total\{outcome="refused"\} (\d+)/);
    const bad = [
      { resource: 'https://seller.example/a\u0000b' },
      { resource: 'https://seller.example/\ud800' },
      { amount: '9223372036854775808' },
    ];
    let paidB = 0;
    const shared = async () => (await metric(/treasury_pay_write_isolation_total\{outcome="committed"\} (\d+)/)) > 0;
    // At least two rounds; more (up to ten) until a bad row has shared a statement with A's writes, which
    // depends on how the group commit happened to batch them.
    for (let round = 0; round < 2 || (round < 10 && !(await shared())); round++) {
      for (const o of bad) {
        // Straight to the pay service, as a payment that slipped past the route schema would arrive, while A pays.
        const requirements = paymentRequirements(o) as Parameters<typeof pay.pay>[1];
        const attempt = pay
          .pay(
            {
              accountId: b.accountId,
              walletId: b.walletId,
              actor: 'test:b',
              idempotencyKey: undefined,
              request: { o },
            },
            requirements,
            undefined,
          )
          .then(
            () => 'accepted',
            (err: unknown) => err,
          );
        paidB++;
        const [answersA, err] = await Promise.all([Promise.all(Array.from({ length: 12 }, () => payA())), attempt]);
        for (const r of answersA) assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.ok(err instanceof AppError, `${JSON.stringify(o)}: ${String(err)}`);
        assert.equal(err.code, 'unstorable_value');
        assert.equal(err.status, 400);
      }
    }
    assert.equal(await retries(), retriesBefore, 'no payment was taken again');
    // B reads its wallet once per payment (what it remembered is dropped with its failed write) but the first,
    // decided on the snapshot read when its wallet was made (src/api/pay/prefetch-snapshot.ts); A never does.
    assert.equal(await reads(), readsBefore + paidB - 1, 'A kept deciding on its remembered snapshot');
    assert.equal(
      await metric(/treasury_pay_write_isolation_total\{outcome="refused"\} (\d+)/),
      isolatedBefore + paidB,
      'each bad row was refused alone',
    );
    assert.equal(
      Number((await t.db.knex('authorizations').where({ wallet_id: b.walletId }).count({ n: '*' }))[0]!.n),
      0,
    );
    assert.equal((await verifyAuditChain(t.db.knex, a.walletId)).ok, true);
    assert.equal((await verifyAuditChain(t.db.knex, b.walletId)).ok, true);
    // A's writes shared statements with B's bad rows (sent again without them), so the test saw the neighbours' side.
    assert.ok(await shared(), "some of A's writes shared a statement with a bad row");
  });

  it("a payment proposing a nonce already used fails alone (409 nonce_already_used); A's writes in its statements commit, none taken again", async () => {
    const nonce = `0x${randomBytes(32).toString('hex')}`;
    const payB = () =>
      t.request('POST', `/v1/wallets/${b.walletId}/pay`, {
        token: b.token,
        body: { payment_requirements: paymentRequirements({ amount: '1000' }), authorization: { nonce } },
      });
    assert.equal((await payB()).status, 200);
    assert.equal((await payA()).status, 200);
    const [retriesBefore, readsBefore] = [await retries(), await reads()];
    const committedBefore = await metric(/treasury_pay_write_isolation_total\{outcome="committed"\} (\d+)/);
    const shared = async () =>
      (await metric(/treasury_pay_write_isolation_total\{outcome="committed"\} (\d+)/)) > committedBefore;
    let attempts = 0;
    // At least two rounds; more (up to twelve) until the clash has shared a statement with A's writes, which
    // depends on when the writer's queue is cut (as in the test above).
    for (let round = 0; round < 12 && (round < 2 || !(await shared())); round++) {
      attempts++;
      const [answersA, again] = await Promise.all([Promise.all(Array.from({ length: 12 }, () => payA())), payB()]);
      for (const r of answersA) assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(again.status, 409, JSON.stringify(again.body));
      assert.equal(again.body.error_code, 'nonce_already_used');
    }
    // B's payment is decided again alone once (where its own answer comes from); A's never.
    assert.equal(await retries(), retriesBefore + attempts, "only B's payments were taken again");
    assert.ok((await reads()) - readsBefore <= 2 * attempts, 'A kept deciding on its remembered snapshot');
    assert.ok(await shared(), "some of A's writes shared a statement with the clash");
    assert.equal((await verifyAuditChain(t.db.knex, a.walletId)).ok, true);
    assert.equal((await verifyAuditChain(t.db.knex, b.walletId)).ok, true);
  });
});

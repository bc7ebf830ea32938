/**
 * The x402 `payment-identifier` store's per-seller budgets (src/api/sellers/payment-ids/payment-id-service.ts),
 * through HTTP against the real API and PostgreSQL, with a seller's service PAT and with a gate PAT:
 * - ids: with TREASURY_MAX_PAYMENT_IDS_PER_SELLER=5, the 6th new id is refused (429 `payment_id_limit_reached`,
 *   scope `ids`, Retry-After), also when ten claims race; a retry of a held id still answers; another seller of the
 *   same account, and the gate's routes for its own seller, have budgets of their own; once claims expire their
 *   room comes back without the seller completing anything.
 * - bytes: with TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER=65536, an answer that does not fit is kept without its
 *   body (a retry gets the receipt, 410, rather than nothing), and one that does not fit even so is refused (429,
 *   scope `answer_bytes`, the claim left pending); answers past retention free the budget.
 * - the background sweep deletes every seller's expired rows and their totals with them.
 * - the paywall's platform client (src/x402/seller/payment-identifier-platform-store.ts) meets a refused claim as an
 *   unavailable store (it throws: the rule answers 503, nothing paid) and a refused answer as a lost one (logged;
 *   the buyer, already paid, still gets its answer).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import {
  PaymentIdentifierStoreError,
  PlatformPaymentIdentifierStore,
} from '../../../src/x402/seller/payment-identifier-platform-store.js';
import { completeClaim } from '../../../src/x402/seller/payment-identifier-rule.js';

const MAX_IDS = 5;
const MAX_BYTES = 65_536;

describe('payment-identifier store: per-seller budgets (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  let offsetMs = 0;
  const t = useTestTreasury({
    clock: () => new Date(Date.now() + offsetMs),
    extraEnv: {
      TREASURY_MAX_PAYMENT_IDS_PER_SELLER: String(MAX_IDS),
      TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER: String(MAX_BYTES),
    },
  });
  let session: string;
  const newId = () => `pay_${randomBytes(12).toString('hex')}`;
  const fingerprint = 'ab'.repeat(32);
  const newSeller = async (name: string, protocol: 'x402' | 'mpp' = 'x402') => {
    const created = await t.request('POST', '/v1/sellers', { token: session, body: { name, protocol } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    return created.body as { seller_id: string; pat: string };
  };
  const call = (pat: string, step: string, body: Record<string, unknown>, prefix = '/v1/payment-ids') =>
    t.request('POST', `${prefix}/${step}`, { token: pat, body: { route: '/paid', fingerprint, ...body } });
  const begin = (pat: string, id: string, extra: Record<string, unknown> = {}, prefix?: string) =>
    call(pat, 'begin', { id, pending_ttl_seconds: 60, ...extra }, prefix);
  const totals = async (sellerId: string): Promise<[number, number]> => {
    const row = await t.db.knex('seller_payment_id_totals').where({ seller_id: sellerId }).first();
    return [Number(row?.id_rows ?? 0), Number(row?.answer_bytes ?? 0)];
  };

  before(async () => {
    session = (await signInWithNewKey(t)).session;
  });
  afterEach(() => {
    offsetMs = 0;
  });

  it('refuses the new id past the ids budget (also to racing claims); retries, other sellers and expiry pass', async () => {
    const seller = await newSeller('Ids Co');
    const ids = Array.from({ length: MAX_IDS }, newId);
    for (const id of ids) assert.deepEqual((await begin(seller.pat, id)).body, { outcome: 'new' });
    const refused = await begin(seller.pat, newId());
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'payment_id_limit_reached');
    assert.deepEqual([refused.body.scope, refused.body.limit, refused.body.stored], ['ids', MAX_IDS, MAX_IDS]);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}: when the first claim expires`);
    assert.equal(refused.body.recovery?.kind, 'retry_later');
    assert.deepEqual((await begin(seller.pat, ids[0]!)).body, { outcome: 'in_flight' }, 'a held id still answers');
    assert.deepEqual(await totals(seller.seller_id), [MAX_IDS, 0]);

    const other = await newSeller('Other Co');
    assert.deepEqual((await begin(other.pat, newId())).body, { outcome: 'new' }, "another seller's budget is its own");

    const racing = await newSeller('Racing Co');
    const answers = await Promise.all(Array.from({ length: 10 }, () => begin(racing.pat, newId())));
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 200, 200, 200, 200, 429, 429, 429, 429, 429],
      JSON.stringify(answers.map((a) => a.body)),
    );
    assert.deepEqual(await totals(racing.seller_id), [MAX_IDS, 0]);

    // The claims' TTL (60 s) passes: nothing was completed or released, yet their room is back.
    offsetMs = 61_000;
    assert.deepEqual((await begin(seller.pat, newId())).body, { outcome: 'new' });
    assert.ok((await totals(seller.seller_id))[0]! <= MAX_IDS);
  });

  it("the gate's routes hold the endpoint's seller to the same budget", async () => {
    const mpp = await newSeller('Gated Co', 'mpp');
    const endpoint = await t.request('POST', `/v1/sellers/${mpp.seller_id}/endpoints`, {
      token: session,
      body: { path: '/paid', price: '0.01' },
    });
    assert.equal(endpoint.status, 201, JSON.stringify(endpoint.body));
    const gate = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body.pat;
    const viaGate = (id: string) => begin(gate, id, { endpoint_id: endpoint.body.endpoint_id }, '/v1/gate/payment-ids');
    for (let i = 0; i < MAX_IDS; i++) assert.deepEqual((await viaGate(newId())).body, { outcome: 'new' });
    const refused = await viaGate(newId());
    assert.deepEqual(
      [refused.status, refused.body.error_code, refused.body.scope],
      [429, 'payment_id_limit_reached', 'ids'],
    );
  });

  it('keeps an answer past the bytes budget without its body, refuses one that does not fit even so; retention frees it', async () => {
    const seller = await newSeller('Bytes Co');
    const answer = (bodyBytes: number, headerBytes = 10) => ({
      status: 200,
      headers: { 'content-type': 'application/octet-stream', 'x-payment-response': 'r'.repeat(headerBytes) },
      body_base64: randomBytes(bodyBytes).toString('base64'),
    });
    const claimAndComplete = async (a: Record<string, unknown>) => {
      const id = newId();
      assert.deepEqual((await begin(seller.pat, id)).body, { outcome: 'new' });
      return { id, completed: await call(seller.pat, 'complete', { id, answer: a }) };
    };
    const whole = await claimAndComplete(answer(30_000)); // 40,000 characters of base64
    assert.deepEqual([whole.completed.status, whole.completed.body], [200, { done: true }]);
    const stored = await begin(seller.pat, whole.id);
    assert.equal(stored.body.outcome, 'stored');
    assert.equal(typeof stored.body.answer.body_base64, 'string', 'kept whole while it fits');

    const lean = await claimAndComplete(answer(30_000));
    assert.deepEqual([lean.completed.status, lean.completed.body], [200, { done: true }]);
    const receiptOnly = await begin(seller.pat, lean.id);
    assert.equal(receiptOnly.body.outcome, 'stored');
    assert.equal(receiptOnly.body.answer.body_base64, undefined, 'kept without its body: a retry gets its receipt');
    assert.equal(receiptOnly.body.answer.headers['x-payment-response'], 'r'.repeat(10));
    const [, afterLean] = await totals(seller.seller_id);
    assert.ok(afterLean <= MAX_BYTES, `${afterLean} bytes`);

    // An answer whose headers alone take 28 KB (a stored header may hold 4 KiB, 8 of them): the 25 KB left do not
    // hold it, even without its body.
    const heavy = {
      status: 200,
      headers: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`x-h${i}`, 'h'.repeat(4_000)])),
      body_base64: '',
    };
    const refused = await claimAndComplete(heavy);
    assert.equal(refused.completed.status, 429, JSON.stringify(refused.completed.body));
    assert.deepEqual(
      [refused.completed.body.error_code, refused.completed.body.scope, refused.completed.body.limit],
      ['payment_id_limit_reached', 'answer_bytes', MAX_BYTES],
    );
    assert.deepEqual((await begin(seller.pat, refused.id)).body, { outcome: 'in_flight' }, 'the claim stays pending');
    assert.equal((await totals(seller.seller_id))[1], afterLean, 'nothing of it was stored');

    // Past the retention (24 h) the stored answers expire: the next answer fits whole again.
    offsetMs = 86_401_000;
    const again = await claimAndComplete(answer(30_000));
    assert.deepEqual([again.completed.status, again.completed.body], [200, { done: true }]);
    assert.equal(typeof (await begin(seller.pat, again.id)).body.answer.body_base64, 'string');
  });

  it("the background sweep deletes every seller's expired rows, and their totals with them", async () => {
    const sellers = [await newSeller('Sweep A'), await newSeller('Sweep B')];
    for (const s of sellers) for (let i = 0; i < 3; i++) await begin(s.pat, newId());
    assert.deepEqual(await totals(sellers[0]!.seller_id), [3, 0]);
    offsetMs = 61_000;
    // (The app runs the same sweep every minute: whichever run deleted the rows, they are gone.)
    const swept = await t.app.services.paymentIdSweeper.sweep();
    assert.equal(swept.failed, 0);
    for (const s of sellers) {
      assert.deepEqual(await totals(s.seller_id), [0, 0]);
      assert.equal(
        Number((await t.db.knex('seller_payment_ids').where({ seller_id: s.seller_id }).count({ n: '*' }))[0]!.n),
        0,
      );
    }
  });

  it("the paywall's platform client takes a refused claim as an unavailable store and a refused answer as a lost one", async () => {
    const seller = await newSeller('Paywall Co');
    const store = new PlatformPaymentIdentifierStore({
      apiUrl: t.baseUrl,
      token: seller.pat,
      fetch,
      timeoutMs: 5_000,
      routes: {
        begin: '/v1/payment-ids/begin',
        complete: '/v1/payment-ids/complete',
        release: '/v1/payment-ids/release',
      },
      scopeIsEndpoint: false,
    });
    const key = () => ({ scope: seller.seller_id, route: '/paid', id: newId() });
    const keys = Array.from({ length: MAX_IDS }, key);
    for (const k of keys) assert.deepEqual(await store.begin(k, fingerprint, 60), { kind: 'new' });
    await assert.rejects(store.begin(key(), fingerprint, 60), PaymentIdentifierStoreError);

    const heavy = {
      status: 200,
      headers: Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`x-h${i}`, 'h'.repeat(4_096)])),
    };
    const warnings: string[] = [];
    const claims = keys.map((k) => ({ store, key: k, fingerprint }));
    const kept = [];
    for (const claim of claims) kept.push(await completeClaim(claim, heavy, (_obj, msg) => warnings.push(msg)));
    assert.deepEqual(
      kept,
      [true, false, false, false, false],
      'one answer of over 32 KiB fits 64 KiB, with room for no other',
    );
    assert.equal(warnings.length, 4);
  });
});

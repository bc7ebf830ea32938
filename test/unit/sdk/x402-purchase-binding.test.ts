/**
 * A purchase is tied to its request (src/sdk/x402-purchase.ts): two scripted sellers over real HTTP on two
 * origins, B serving a copy of A's 402, and a real viem account.
 * - A's purchase (paid, answer lost) named with B's URL: `PurchaseRequestMismatchError`, B receives nothing —
 *   no payment header, not even the unpaid request; with another method on A's URL, the same;
 * - on A's own URL and method the stored payment is sent again, byte for byte;
 * - a record kept before the binding existed (no `requestHash`) is resumed on no URL (`unbound`), nothing sent.
 */
import assert from 'node:assert/strict';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import {
  createX402Buyer,
  memoryPurchaseStore,
  PurchaseRequestMismatchError,
  type PurchaseStore,
} from '../../../src/sdk/index.js';
import { buyer, requirements } from '../x402/x402-fixtures.js';
import { scriptedServer, type RecordedRequest, type ScriptedServer } from './scripted-http.js';

const PAYMENT_ID = 'pay_0123456789abcdef0123456789abcdef';
const entry = requirements({ payTo: '0x000000000000000000000000000000000000A11c' });

/** A seller whose 402 is A's (B copies it); a paid request gets `paid`. */
const sellerOf = (paid: () => { status: number; drop?: boolean }) => (req: RecordedRequest) =>
  req.headers['payment-signature']
    ? { ...paid(), body: 'content' }
    : {
        status: 402,
        headers: {
          'payment-required': encodePaymentRequired({
            x402Version: 2,
            resource: { url: `http://${req.headers.host}${req.url}` },
            accepts: [entry],
          }),
        },
        body: {},
      };

const paymentHeaders = (s: ScriptedServer) =>
  s.requests.map((r) => r.headers['payment-signature']).filter((h): h is string => typeof h === 'string');

describe('buyer SDK: a purchase is resumed on its own request only', () => {
  let a: ScriptedServer;
  let b: ScriptedServer;
  let purchases: PurchaseStore;
  let aAnswers: { status: number; drop?: boolean };
  const newBuyer = () => createX402Buyer({ account: buyer, network: 'eip155:84532', maxPriceUsd: '0.05', purchases });

  beforeEach(async () => {
    aAnswers = { status: 0, drop: true };
    a = await scriptedServer(sellerOf(() => aAnswers));
    b = await scriptedServer(sellerOf(() => ({ status: 200 })));
    purchases = memoryPurchaseStore();
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });

  it("A's purchase named on B's URL, or with another method: PurchaseRequestMismatchError, nothing reaches B", async () => {
    await assert.rejects(newBuyer().request(`${a.url}/report`, { paymentId: PAYMENT_ID }));
    assert.equal(paymentHeaders(a).length, 1, 'A was paid; its answer was lost');

    await assert.rejects(
      newBuyer().request(`${b.url}/anything`, { paymentId: PAYMENT_ID }),
      (err: unknown) =>
        err instanceof PurchaseRequestMismatchError &&
        err.code === 'purchase_request_mismatch' &&
        err.details.unbound === false,
    );
    assert.deepEqual([paymentHeaders(b), b.requests.length], [[], 0], 'B receives nothing');
    const requestsToA = a.requests.length;
    await assert.rejects(
      newBuyer().request(`${a.url}/report`, { paymentId: PAYMENT_ID, method: 'POST' }),
      PurchaseRequestMismatchError,
    );
    assert.equal(a.requests.length, requestsToA, 'another method: nothing sent');

    // On its own URL and method the stored payment is sent again, byte for byte.
    aAnswers = { status: 200 };
    const resumed = await newBuyer().request(`${a.url}/report`, { paymentId: PAYMENT_ID });
    assert.equal(resumed.paid, true);
    const [first, second] = paymentHeaders(a);
    assert.equal(second, first);
  });

  it('a record kept before purchases were tied to their request is resumed on no URL; nothing is sent', async () => {
    await assert.rejects(newBuyer().request(`${a.url}/report`, { purchaseKey: 'report' }));
    const { requestHash: _bound, ...legacy } = (await purchases.get('report'))!;
    assert.ok(legacy.signed, 'a signed payment');
    await purchases.put('report', legacy);
    const requestsToA = a.requests.length;
    for (const url of [`${a.url}/report`, `${b.url}/report`])
      await assert.rejects(
        newBuyer().request(url, { purchaseKey: 'report' }),
        (err: unknown) => err instanceof PurchaseRequestMismatchError && err.details.unbound === true,
      );
    assert.deepEqual([a.requests.length, b.requests.length], [requestsToA, 0]);
  });
});

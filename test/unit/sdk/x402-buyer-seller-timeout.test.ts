/**
 * createX402Buyer bounds each exchange with a seller (`sellerTimeoutMs`, default 2 minutes): a seller on loopback
 * HTTP that accepts the connection and never answers, or answers the paid request and never finishes its body,
 * makes the exchange fail with `SellerTimeoutError` (code `seller_timeout`, the bound, and whether the payment
 * was sent) instead of holding the caller for ever. Sent, the purchase stays in its store: the same purchase key
 * sends the same payment again, never a second. The caller's own signal still aborts as the caller's error, and a
 * long-lived one keeps no listener of a finished exchange.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type http from 'node:http';
import { DEFAULT_SELLER_TIMEOUT_MS, SellerTimeoutError, type X402BuyerOptions } from '../../../src/sdk/index.js';
import { buyerOf, challengeHeader, loopbackSeller, type LoopbackSeller } from './loopback-seller.js';
import { fakeTreasuryHandler, scriptedServer, type ScriptedServer } from './scripted-http.js';

describe('buyer SDK: a seller that never answers is SellerTimeoutError, not a call held for ever', function () {
  this.timeout(30_000);
  let treasury: ScriptedServer;
  let seller: LoopbackSeller;
  const held: http.ServerResponse[] = [];

  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    seller = await loopbackSeller();
    held.length = 0;
  });
  afterEach(async () => {
    await seller.close();
    await treasury.close();
  });

  const newBuyer = (extra: Partial<X402BuyerOptions> = {}) => buyerOf(treasury, extra);
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));
  const timedOut =
    (fields: { timeout_ms: number; payment_sent: boolean }) =>
    (err: unknown): boolean => {
      assert.ok(err instanceof SellerTimeoutError, String(err));
      assert.equal(err.code, 'seller_timeout');
      assert.deepEqual({ timeout_ms: err.timeout_ms, payment_sent: err.payment_sent }, fields);
      assert.deepEqual(err.details, fields);
      return true;
    };
  /** A seller that answers 402 unpaid and holds the paid request (`body`: sends headers and one byte first). */
  const holdPaid =
    (body: boolean): http.RequestListener =>
    (req, res) => {
      if (!req.headers['payment-signature']) return void res.writeHead(402, challengeHeader(req)).end('{}');
      held.push(res);
      if (body) res.writeHead(200, { 'content-type': 'text/plain' }).write('a');
    };

  it('no answer to the unpaid request: seller_timeout with nothing sent, nothing signed', async () => {
    seller.handler = (_req, res) => void held.push(res);
    await assert.rejects(
      newBuyer({ sellerTimeoutMs: 300 }).request(seller.url),
      timedOut({ timeout_ms: 300, payment_sent: false }),
    );
    assert.equal(pays().length, 0, 'Treasury was not asked to sign');
  });

  it('the paid answer held: payment_sent, and the same purchase key sends the same payment again', async () => {
    seller.handler = holdPaid(false);
    const buyer = newBuyer({ sellerTimeoutMs: 500 });
    for (let i = 0; i < 2; i++)
      await assert.rejects(
        buyer.request(seller.url, { purchaseKey: 'report-1' }),
        timedOut({ timeout_ms: 500, payment_sent: true }),
      );
    assert.equal(pays().length, 1, 'signed once');
    assert.equal(seller.paymentHeaders.length, 2);
    assert.equal(seller.paymentHeaders[1], seller.paymentHeaders[0], 'the same payment, byte for byte');
  });

  it('a paid body that never ends is bounded too, in request and in the drop-in fetch', async () => {
    seller.handler = holdPaid(true);
    const buyer = newBuyer({ sellerTimeoutMs: 500 });
    await assert.rejects(buyer.request(seller.url), timedOut({ timeout_ms: 500, payment_sent: true }));
    await assert.rejects(buyer.fetch(seller.url), timedOut({ timeout_ms: 500, payment_sent: true }));
    assert.equal(pays().length, 2, 'one payment each: two purchases');
  });

  it('a fetch that ignores its signal: the deadline still ends the call, and a 402 that comes after it is not paid', async () => {
    let answer: (response: Response) => void = () => {};
    const late = new Promise<Response>((resolve) => (answer = resolve));
    const asked: string[] = [];
    const deaf = (input: string | URL | Request) => {
      asked.push(String(input));
      return late;
    };
    const buyer = newBuyer({ sellerTimeoutMs: 300, fetch: deaf });
    await assert.rejects(buyer.request(seller.url), timedOut({ timeout_ms: 300, payment_sent: false }));
    const challenge = challengeHeader({ headers: { host: new URL(seller.url).host }, url: '/x' });
    answer(new Response('{}', { status: 402, headers: challenge }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(asked.length, 1, 'no paid request');
    assert.equal(pays().length, 0, 'Treasury was not asked to sign after the deadline');
  });

  it("the seller's part only: a refusal answered in time, then a slow balance read, is the refusal", async () => {
    await treasury.close();
    const fake = fakeTreasuryHandler();
    treasury = await scriptedServer(async (req) => {
      if (req.url.endsWith('/balance')) await new Promise((resolve) => setTimeout(resolve, 700));
      return fake(req);
    });
    seller.handler = (req, res) => void res.writeHead(402, challengeHeader(req)).end('{}');
    await assert.rejects(newBuyer({ sellerTimeoutMs: 300 }).request(seller.url), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'payment_failed', String(err));
      return true;
    });
    assert.equal(treasury.requests.filter((r) => r.url.endsWith('/balance')).length, 1, 'the balance was read');
  });

  it("the caller's signal aborts as the caller's error; a long-lived one keeps no listener after the exchanges", async () => {
    seller.handler = (req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('free');
    const long = new AbortController();
    const buyer = newBuyer();
    for (let i = 0; i < 3; i++) assert.equal((await buyer.request(seller.url, { signal: long.signal })).body, 'free');
    assert.equal(getEventListeners(long.signal, 'abort').length, 0, 'no listener left behind');

    seller.handler = (_req, res) => void held.push(res);
    const mine = new AbortController();
    const pending = buyer.request(seller.url, { signal: mine.signal });
    setTimeout(() => mine.abort(new Error('stopped by the caller')), 100);
    await assert.rejects(pending, (err: Error) => {
      assert.ok(!(err instanceof SellerTimeoutError), String(err));
      assert.equal(err.message, 'stopped by the caller');
      return true;
    });
    await assert.rejects(buyer.request(seller.url, { signal: AbortSignal.abort(new Error('already')) }), /already/);
  });

  it('the bound is an option, checked like every other: 1 ms to 10 minutes, 2 minutes by default', () => {
    assert.equal(DEFAULT_SELLER_TIMEOUT_MS, 120_000);
    assert.doesNotThrow(() => newBuyer({ sellerTimeoutMs: 1 }));
    assert.doesNotThrow(() => newBuyer({ sellerTimeoutMs: 600_000 }));
    for (const bad of [0, -1, 1.5, '1000', 600_001, Number.POSITIVE_INFINITY, Number.NaN])
      assert.throws(
        () => newBuyer({ sellerTimeoutMs: bad as number }),
        (err: Error & { code?: string; field?: string }) => err.code === 'invalid_argument',
      );
  });
});

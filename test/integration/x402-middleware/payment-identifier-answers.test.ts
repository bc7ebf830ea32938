/**
 * The Koa middleware's `payment-identifier` answers that need a facilitator or platform to misbehave (the
 * end-to-end suite, test/e2e/x402-koa-payment-identifier.test.ts, covers the rest on a real chain):
 * - a retry while the first request with the id is still in flight → 409 `payment_identifier_in_flight`;
 * - an answer larger than `max_answer_bytes` is kept as its receipt only: the retry gets 410
 *   `payment_identifier_not_replayable` with the PAYMENT-RESPONSE, never the body, and nothing is settled again;
 * - the platform store unreachable → 503 `payment_identifier_unavailable`, nothing verified;
 * - a handler's compressed bytes are replayed with their Content-Encoding (else the retry is unreadable).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { x402HTTPClient } from '@x402/core/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import type { X402KoaOptions } from 'treasury/koa';
import { officialClient } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, startFakes, startSellerApp, TX_HASH, type FakeServer, type SellerApp } from './x402-fakes.js';

describe('x402 Koa middleware: payment-identifier answers', () => {
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  let app: SellerApp | undefined;
  beforeEach(async () => {
    fakes = await startFakes();
  });
  afterEach(async () => {
    await app?.middleware.flush();
    await Promise.all([app?.stop(), fakes.facilitator.stop(), fakes.platform.stop()]);
    app = undefined;
  });
  const start = async (options: Partial<X402KoaOptions>) =>
    (app = await startSellerApp({ facilitator_url: fakes.facilitator.url, api_url: fakes.platform.url, ...options }));

  async function paymentWithId(url: string, id = generatePaymentId()): Promise<Record<string, string>> {
    const client = officialClient();
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      appendPaymentIdentifierToExtensions(paymentRequired.extensions!, id);
    });
    const http = new x402HTTPClient(client);
    const challenge = await fetch(url);
    const required = http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
    return http.encodePaymentSignatureHeader(await http.createPaymentPayload(required));
  }

  it('a retry while the first request is in flight → 409 payment_identifier_in_flight', async () => {
    // Generous time-outs: the verify reply is held back on purpose, and the machine may be slow.
    const { url } = await start({ timeouts: { verify_ms: 10_000, settle_ms: 10_000, platform_ms: 500 } });
    fakes.facilitator.on('/verify', (c) => ({
      delayMs: 600,
      body: { isValid: true, payer: c.body?.paymentPayload?.payload?.authorization?.from },
    }));
    const headers = await paymentWithId(`${url}/paid`);
    const first = fetch(`${url}/paid`, { headers });
    while (fakes.facilitator.callsTo('/verify').length === 0) await new Promise((r) => setTimeout(r, 10));
    const retry = await fetch(`${url}/paid`, { headers });
    assert.equal(retry.status, 409);
    assert.equal(retry.headers.get('retry-after'), '1');
    assert.equal(((await retry.json()) as { error_code: string }).error_code, 'payment_identifier_in_flight');
    const done = await first;
    assert.equal(done.status, 200, await done.text());
    assert.equal(fakes.facilitator.callsTo('/settle').length, 1);
  });

  it('an answer too large to keep: the retry gets 410 with the receipt, never the body', async () => {
    const { url } = await start({ payment_identifier: { max_answer_bytes: 8 } });
    const headers = await paymentWithId(`${url}/paid`);
    const first = await fetch(`${url}/paid`, { headers });
    assert.equal(first.status, 200);
    assert.ok((await first.text()).includes(PAID_BODY));
    const retry = await fetch(`${url}/paid`, { headers });
    assert.equal(retry.status, 410);
    const text = await retry.text();
    assert.ok(!text.includes(PAID_BODY));
    assert.equal(JSON.parse(text).error_code, 'payment_identifier_not_replayable');
    assert.equal(retry.headers.get('payment-response'), first.headers.get('payment-response'));
    const receipt = JSON.parse(Buffer.from(retry.headers.get('payment-response')!, 'base64').toString('utf8'));
    assert.equal(receipt.transaction, TX_HASH);
    assert.equal(fakes.facilitator.callsTo('/settle').length, 1, 'settled once');
    assert.equal(app!.handlerRuns, 1);
  });

  it('the platform store unreachable → 503 payment_identifier_unavailable, nothing verified', async () => {
    const { url } = await start({ payment_identifier: { store: 'platform' } });
    fakes.platform.on('/v1/payment-ids/begin', { status: 500, body: { error_code: 'internal_error' } });
    const res = await fetch(`${url}/paid`, { headers: await paymentWithId(`${url}/paid`) });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    assert.equal(((await res.json()) as { error_code: string }).error_code, 'payment_identifier_unavailable');
    assert.equal(fakes.facilitator.callsTo('/verify').length, 0);
    assert.equal(
      fakes.platform.callsTo('/v1/payment-ids/begin')[0]!.headers.authorization?.startsWith('Bearer '),
      true,
    );
  });

  it("a handler's pre-compressed answer is replayed with its Content-Encoding: the retry decodes to the same body", async () => {
    const { url } = await start({});
    const headers = await paymentWithId(`${url}/pre-compressed`);
    // undici's fetch decodes a gzip body it is told about: the raw bytes are read through node:http instead.
    const raw = (h: Record<string, string>) =>
      new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        http
          .get(`${url}/pre-compressed`, { headers: h }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({
                status: res.statusCode ?? 0,
                encoding: res.headers['content-encoding'],
                body: Buffer.concat(chunks),
              }),
            );
          })
          .on('error', reject);
      });
    const first = await raw(headers);
    assert.equal(first.status, 200);
    assert.equal(first.encoding, 'gzip');
    const retry = await raw(headers);
    assert.equal(retry.status, 200);
    assert.equal(retry.encoding, 'gzip', 'the stored answer says what its bytes are');
    assert.equal(gunzipSync(retry.body).toString('utf8'), PAID_BODY);
    assert.equal(fakes.facilitator.callsTo('/settle').length, 1, 'settled once');
    assert.equal(app!.handlerRuns, 1);
  });
});

/**
 * Seller middleware, settlement after the handler: the body (strings, JSON, streams, oversize streams) is held
 * until the facilitator settles; settle failures and outages discard it; handler failures are never settled;
 * concurrent copies of one payment settle once; ledger reports carry sha256(body) and never slow the buyer.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentPayload, PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import {
  closedPortUrl,
  ENDPOINT_A,
  PAID_BODY,
  startFakes,
  startSellerApp,
  useSellerAppPerTest,
  TX_HASH,
  type SellerApp,
} from './x402-fakes.js';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

async function signedFor(app: SellerApp, path = '/paid'): Promise<{ header: string; payment: PaymentPayload }> {
  const res = await fetch(`${app.url}${path}`);
  const c = (await res.json()) as PaymentRequired;
  const payment = await signExactPayment(c.accepts[0]!);
  return { header: encodePaymentPayload(payment), payment };
}

async function waitFor(check: () => boolean, ms = 3000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('x402 Koa middleware: settlement', () => {
  const { facilitator, platform, app } = useSellerAppPerTest({ max_body_bytes: 256 });

  for (const path of ['/paid', '/text', '/stream']) {
    it(`reports a ledger row whose content_hash is sha256 of the body sent (${path})`, async () => {
      const { header, payment } = await signedFor(app, path);
      const res = await fetch(`${app.url}${path}`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.ok(text.includes(PAID_BODY));
      await app.middleware.flush();
      const [report] = platform.callsTo('/v1/ledger');
      const auth = (payment.payload as { authorization: { from: string; nonce: string } }).authorization;
      assert.deepEqual(report!.body, {
        tx_hash: TX_HASH,
        payer: auth.from,
        amount: '10000',
        network: 'eip155:84532',
        endpoint_id: ENDPOINT_A,
        method: 'GET',
        route: path,
        content_hash: sha256(text),
        nonce: auth.nonce,
      });
      assert.equal(report!.headers.authorization, `Bearer ${app.middleware.config.token}`);
    });
  }

  it('holds a streamed body until settlement: nothing arrives before settle answers', async () => {
    facilitator.on('/settle', (c) => ({ delayMs: 300, body: { success: true, txHash: TX_HASH } }));
    const { header } = await signedFor(app, '/stream');
    const started = Date.now();
    const res = await fetch(`${app.url}/stream`, { headers: { 'PAYMENT-SIGNATURE': header } });
    const headersAt = Date.now();
    assert.equal(res.status, 200);
    assert.ok(headersAt - started >= 280, 'status line only after settlement');
    assert.equal(await res.text(), PAID_BODY);
    assert.ok(res.headers.get('payment-response'));
  });

  it('an oversize stream stays unread until settled, then flows whole with its hash reported', async () => {
    const { header } = await signedFor(app, '/big-stream');
    const res = await fetch(`${app.url}/big-stream`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(text.length > 256);
    assert.match(text, /-0063\n$/);
    assert.ok(decodePaymentResponseHeader(res.headers.get('payment-response')!).success);
    await waitFor(() => platform.callsTo('/v1/ledger').length === 1);
    assert.equal(platform.callsTo('/v1/ledger')[0]!.body.content_hash, sha256(text));
  });

  it('an oversize stream whose settlement fails is destroyed, never sent', async () => {
    facilitator.on('/settle', {
      body: { success: false, errorReason: 'insufficient_funds', transaction: '', network: 'eip155:84532' },
    });
    const { header } = await signedFor(app, '/big-stream');
    const res = await fetch(`${app.url}/big-stream`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 402);
    assert.ok(!(await res.text()).includes(PAID_BODY));
  });

  it('settle success:false → 402 re-issued with a success:false receipt; body and handler headers discarded', async () => {
    facilitator.on('/settle', {
      body: {
        success: false,
        errorReason: 'invalid_exact_evm_nonce_already_used',
        transaction: '',
        network: 'eip155:84532',
      },
    });
    const { header } = await signedFor(app);
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 402);
    const text = await res.text();
    assert.ok(!text.includes(PAID_BODY));
    assert.equal(res.headers.get('x-handler-secret'), null);
    assert.ok(res.headers.get('payment-required'));
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, false);
    assert.equal(receipt.errorReason, 'invalid_exact_evm_nonce_already_used');
    assert.equal(res.headers.get('x-payment-response'), res.headers.get('payment-response'));
    assert.match(JSON.parse(text).error, /^settlement_failed/);
    assert.equal(app.handlerRuns, 1);
    await app.middleware.flush();
    assert.equal(platform.callsTo('/v1/ledger').length, 0);
  });

  for (const [label, reply] of [
    ['answers 5xx', { status: 500, body: { error: 'boom' } }],
    ['is slower than the settle time-out', { delayMs: 1500, body: { success: true, txHash: TX_HASH } }],
    ['drops the connection', 'drop'],
    ['answers success without a transaction', { body: { success: true } }],
  ] as const) {
    it(`facilitator ${label} at settle → 402 with success:false; the body never leaves`, async () => {
      facilitator.on('/settle', reply);
      const { header } = await signedFor(app, '/text');
      const res = await fetch(`${app.url}/text`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(res.status, 402);
      assert.ok(!(await res.text()).includes(PAID_BODY));
      assert.equal(decodePaymentResponseHeader(res.headers.get('payment-response')!).success, false);
    });
  }

  it('facilitator gone between verify and settle (connection refused) → 402, body withheld', async () => {
    facilitator.on('/settle', 'drop');
    const { header } = await signedFor(app);
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 402);
    assert.ok(!(await res.text()).includes(PAID_BODY));
  });

  it('handler status ≥ 400 → no settle call; the handler response goes out as is', async () => {
    const { header } = await signedFor(app, '/fail');
    const res = await fetch(`${app.url}/fail`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 500);
    assert.equal(await res.text(), `HANDLER-ERROR ${PAID_BODY}`);
    assert.equal(res.headers.get('payment-response'), null);
    assert.equal(facilitator.callsTo('/verify').length, 1);
    assert.equal(facilitator.callsTo('/settle').length, 0);
    // The unused payment may be presented again.
    assert.equal((await fetch(`${app.url}/fail`, { headers: { 'PAYMENT-SIGNATURE': header } })).status, 500);
  });

  it('handler throws → no settle call; Koa answers 500', async () => {
    const { header } = await signedFor(app, '/throws');
    const res = await fetch(`${app.url}/throws`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 500);
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });

  it('rule 6: a handler that bypasses Koa still gets its 200 out, settled but without a receipt header', async () => {
    const { header } = await signedFor(app, '/bypass');
    const res = await fetch(`${app.url}/bypass`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), PAID_BODY);
    assert.equal(res.headers.get('payment-response'), null);
    await waitFor(() => facilitator.callsTo('/settle').length === 1);
    // The ledger row is queued once the settle answer is read, which may be after the settle call was seen.
    for (const until = Date.now() + 5000; platform.callsTo('/v1/ledger').length === 0 && Date.now() < until;)
      await app.middleware.flush().then(() => new Promise((r) => setTimeout(r, 10)));
    assert.equal(platform.callsTo('/v1/ledger')[0]!.body.content_hash, undefined);
  });

  it('two concurrent requests with the same payment header settle at most once', async () => {
    facilitator.on('/settle', { delayMs: 200, body: { success: true, txHash: TX_HASH } });
    const { header } = await signedFor(app);
    const results = await Promise.all(
      [1, 2, 3].map(() => fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } })),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 402, 402]);
    for (const r of results)
      if (r.status === 402) assert.equal(((await r.json()) as PaymentRequired).error, 'payment_already_used');
    assert.equal(facilitator.callsTo('/settle').length, 1);
    assert.equal(app.handlerRuns, 1);
    // A later replay of the settled header is refused without asking the facilitator.
    const again = await fetch(`${app.url}/paid`, { headers: { 'X-PAYMENT': header } });
    assert.equal(again.status, 402);
    assert.equal(facilitator.callsTo('/verify').length, 1);
  });

  it('platform hanging on ledger reports: the buyer gets 200 while the report still waits for its time-out', async function () {
    this.timeout(30_000);
    platform.on('/v1/ledger', { delayMs: 8000, status: 503 });
    const slow = await startSellerApp({
      facilitator_url: facilitator.url,
      api_url: platform.url,
      timeouts: { platform_ms: 4000 },
      ledger_retry_delays_ms: [],
    });
    try {
      const { header } = await signedFor(slow);
      const started = Date.now();
      const res = await fetch(`${slow.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(res.status, 200);
      assert.ok((await res.text()).includes(PAID_BODY));
      // An order, not a wall-clock budget: when the buyer has the body, the report is still in flight (flush()
      // has not resolved by the next turn of the event loop). A response that waited for the report would come
      // only after its 4 s time-out, when nothing is left to flush; a paid request takes milliseconds.
      const reporting = await Promise.race([
        slow.middleware.flush().then(() => false),
        new Promise<boolean>((resolve) => setImmediate(() => resolve(true))),
      ]);
      assert.equal(reporting, true, `the buyer waited for the report (${Date.now() - started} ms)`);
      await slow.middleware.flush();
      assert.ok(Date.now() - started >= 3900, 'the report itself waited for its time-out');
    } finally {
      await slow.stop();
    }
  });

  it('platform down for ledger reports: the report is retried a bounded number of times, then given up', async () => {
    platform.on('/v1/ledger', { delayMs: 2000, status: 503 });
    const { header } = await signedFor(app);
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 200);
    await app.middleware.flush();
    assert.equal(platform.callsTo('/v1/ledger').length, 3); // first attempt + 2 retries, each cut by the time-out
    assert.match(await app.registry.metrics(), /treasury_x402_middleware_ledger_reports_total\{outcome="failed"\} 1/);
  });

  it('platform unreachable: the buyer still gets 200, reports fail quietly', async () => {
    const { facilitator: f2 } = await startFakes();
    const offline = await startSellerApp({ facilitator_url: f2.url, api_url: await closedPortUrl() });
    try {
      const { header } = await signedFor(offline);
      const res = await fetch(`${offline.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(res.status, 200);
      await offline.middleware.flush();
      assert.match(await offline.registry.metrics(), /ledger_reports_total\{outcome="failed"\} 1/);
      assert.ok(offline.logs.some((l) => l.level === 'warn' && /could not validate the service PAT/.test(l.msg ?? '')));
    } finally {
      await Promise.all([offline.stop(), f2.stop()]);
    }
  });

  it('XX_DISABLE_BODY_CAPTURE=1 leaves content_hash out of the report', async () => {
    const nocapture = await startSellerApp({
      facilitator_url: facilitator.url,
      api_url: platform.url,
      env: { XX_DISABLE_BODY_CAPTURE: '1' },
    });
    try {
      const { header } = await signedFor(nocapture);
      assert.equal((await fetch(`${nocapture.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } })).status, 200);
      await nocapture.middleware.flush();
      assert.equal(platform.callsTo('/v1/ledger')[0]!.body.content_hash, undefined);
    } finally {
      await nocapture.stop();
    }
  });

  it('exports the three metrics on the registry passed in', async () => {
    const { header } = await signedFor(app);
    await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    const text = await app.registry.metrics();
    assert.match(text, /treasury_x402_middleware_requests_total\{outcome="settled"\} 1/);
    assert.match(text, /treasury_x402_middleware_requests_total\{outcome="challenged"\} 1/);
    assert.match(text, /treasury_x402_middleware_facilitator_seconds_count\{op="verify"\} 1/);
    assert.match(text, /treasury_x402_middleware_facilitator_seconds_count\{op="settle"\} 1/);
    await app.middleware.flush();
    assert.match(await app.registry.metrics(), /treasury_x402_middleware_ledger_reports_total\{outcome="sent"\} 1/);
  });
});

/**
 * What the gate adds to the paywall's table (docs/gate.md): the proxy (no payment header reaches the origin;
 * hop-by-hop headers stop at the gate; Host is the origin's; the request body arrives; the origin cannot forge a
 * receipt), the failures that withhold settlement (origin unreachable → 502, too slow → 504, dies mid-answer →
 * 502, request body over the cap → 413; a buyer who leaves: gate-buyer-gone.test.ts), a body larger than what is
 * held in memory, the ledger row
 * (endpoint and content hash), routing by path prefix and by host, suspended and unfinished sellers, and the
 * catalogue's life (not ready, kept when a read fails).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { canonicalName as canonical } from '../../../src/gate/proxy-headers.js';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { closedPortUrl, PAID_BODY, startFakes, TX_HASH, type FakeServer } from '../x402-middleware/x402-fakes.js';
import {
  catalogueEndpoint,
  GATE_SLUG,
  HUGE_BYTES,
  startOrigin,
  startTestGate,
  tableCatalogue,
  type TestGate,
  type TestOrigin,
} from './gate-fakes.js';

async function payFor(url: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 402, `${url} challenges`);
  const c = (await res.json()) as PaymentRequired;
  return encodePaymentPayload(await signExactPayment(c.accepts[0]!));
}

/** A raw HTTP/1.1 request (fetch refuses hop-by-hop request headers). */
function rawRequest(
  url: string,
  headers: Record<string, string>,
  method = 'GET',
  body?: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('gate: proxy, failures, ledger, routing and catalogue', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;
  let base: string;
  let catalogue: ReturnType<typeof tableCatalogue>;
  /** Rows the platform stored: the fake has no batch route (404), so the reporter sends them one by one. */
  const ledgerRows = () => platform.callsTo('/v1/gate/ledger').map((c) => c.body);

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    catalogue = tableCatalogue(origin.url);
    catalogue.sellers[0]!.endpoints.push({ ...catalogueEndpoint('/echo', '0.01'), method: 'POST' });
    platform.on('/v1/gate/catalogue', { status: 200, body: catalogue });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_BASE_DOMAIN: 'gate.test' });
    base = `${gate.url}/${GATE_SLUG}`;
  });
  afterEach(async () => {
    await gate.app.ledger.flush();
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('the origin never sees a payment header; hop-by-hop headers stop at the gate; Host is the origin’s', async () => {
    const header = await payFor(`${base}/paid`);
    const res = await rawRequest(`${base}/paid?x=1`, {
      'PAYMENT-SIGNATURE': header,
      'X-PAYMENT': header,
      'X-Payment-Extra': 'also-a-payment-header',
      Connection: 'keep-alive, X-Hop-Secret',
      'X-Hop-Secret': 'must-not-cross',
      'Proxy-Authorization': 'Basic c2VjcmV0',
      TE: 'trailers',
      'X-Forwarded-For': '6.6.6.6',
      'X-Original-URL': '/premium',
      X_Rewrite_URL: '/premium',
      'X-Forwarded-Uri': '/premium',
      'X-Kept': 'yes',
    });
    assert.equal(res.status, 200, res.body);
    assert.ok(res.headers['payment-response']);
    const seen = origin.requests.at(-1)!;
    assert.equal(seen.url, '/paid?x=1');
    for (const name of Object.keys(seen.headers))
      assert.ok(!/payment/i.test(name), `payment header ${name} reached the origin`);
    for (const name of ['x-hop-secret', 'proxy-authorization', 'te'])
      assert.equal(seen.headers[name], undefined, `${name} crossed`);
    for (const name of Object.keys(seen.headers))
      assert.ok(!/original-url|rewrite-url|forwarded-uri/.test(canonical(name)), `a target override ${name} crossed`);
    assert.equal(seen.headers['x-kept'], 'yes');
    assert.equal(seen.headers.host, new URL(origin.url).host);
    assert.equal(seen.headers['x-forwarded-host'], new URL(gate.url).host);
    assert.equal(seen.headers['x-forwarded-prefix'], `/${GATE_SLUG}`);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1', "the buyer's own X-Forwarded-For is not kept");
  });

  it('client-address, scheme and script-name headers are the gate’s own; Content-Type crosses under its name only', async () => {
    const res = await rawRequest(`${base}/paid`, {
      'PAYMENT-SIGNATURE': await payFor(`${base}/paid`),
      'X-Script-Name': '/news',
      'X-Real-IP': '6.6.6.6',
      'Client-IP': '6.6.6.6',
      'True-Client-IP': '6.6.6.6',
      'X-Client-IP': '6.6.6.6',
      'X-Forwarded-Prefix': '/news',
      'X-Forwarded-Scheme': 'https',
      'X-Original-URL': '/premium',
      'X-Rewrite-URL': '/premium',
      Content_Type: 'application/x-www-form-urlencoded',
    });
    assert.equal(res.status, 200, res.body);
    const seen = origin.requests.at(-1)!.headers;
    const dropped = [
      'x-script-name',
      'x-real-ip',
      'client-ip',
      'true-client-ip',
      'x-client-ip',
      'x-forwarded-scheme',
      'x-original-url',
      'x-rewrite-url',
    ];
    const crossed = Object.keys(seen).filter((name) => dropped.includes(name) || name === 'content_type');
    assert.deepEqual(crossed, [], 'crossed to the origin');
    assert.equal(seen['x-forwarded-prefix'], `/${GATE_SLUG}`, "the buyer's own X-Forwarded-Prefix is not kept");
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
  });

  it('what a Connection header lists is dropped per value: each request its own list, the same value again alike', async () => {
    const sent = async (connection: string) => {
      const res = await rawRequest(`${base}/paid`, {
        'PAYMENT-SIGNATURE': await payFor(`${base}/paid`),
        Connection: connection,
        'X-Hop-One': 'one',
        'X-Hop-Two': 'two',
      });
      assert.equal(res.status, 200, res.body);
      const seen = origin.requests.at(-1)!.headers;
      return [seen['x-hop-one'], seen['x-hop-two']];
    };
    assert.deepEqual(await sent('keep-alive, X-Hop-One'), [undefined, 'two']);
    assert.deepEqual(await sent('keep-alive, X_Hop_Two'), ['one', undefined]);
    assert.deepEqual(await sent('keep-alive, X-Hop-One'), [undefined, 'two']);
    assert.deepEqual(await sent('keep-alive'), ['one', 'two']);
  });

  it('the ledger row names the endpoint, the origin route and the sha256 of the body the buyer got', async () => {
    const res = await fetch(`${base}/text`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/text`) } });
    assert.equal(res.status, 200);
    const body = await res.text();
    assert.equal(body, PAID_BODY);
    await gate.app.ledger.flush();
    const [row] = ledgerRows();
    const textEndpoint = catalogue.sellers[0]!.endpoints.find((e) => e.path === '/text')!;
    assert.equal(row.tx_hash, TX_HASH);
    assert.equal(row.route, '/text');
    assert.equal(row.method, 'GET');
    assert.equal(row.endpoint_id, textEndpoint.endpoint_id);
    assert.equal(row.payer.length, 42);
    assert.equal(row.content_hash, createHash('sha256').update(body).digest('hex'));
  });

  it('a body larger than what is held streams after settlement, whole, and its hash is reported', async () => {
    const res = await fetch(`${base}/big-stream`, {
      headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/big-stream`) },
    });
    assert.equal(res.status, 200);
    const body = await res.text();
    assert.ok(body.length > 256 && body.endsWith('-0063\n'));
    assert.ok(res.headers.get('payment-response'));
    await gate.app.ledger.flush();
    assert.equal(ledgerRows()[0]?.content_hash, createHash('sha256').update(body).digest('hex'));
  });

  it('an origin that sends 103 Early Hints first is held and answered on its final 200, settled once', async () => {
    const res = await fetch(`${base}/hints`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/hints`) } });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), PAID_BODY);
    assert.ok(res.headers.get('payment-response'));
    assert.equal(facilitator.callsTo('/settle').length, 1);
  });

  it('an unpriced answer of 4 MiB streams through whole to a buyer who reads slowly', async () => {
    const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http.get(`${base}/huge`, resolve).on('error', reject),
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-length'], String(HUGE_BYTES));
    const hash = createHash('sha256');
    let received = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      hash.update(chunk);
      received += chunk.length;
      // A slow reader now and then: the gate must hold the origin back, not drop or reorder.
      if (received % (1024 * 1024) < chunk.length) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(received, HUGE_BYTES);
    const expected = createHash('sha256');
    for (let i = 0; i < HUGE_BYTES / 65_536; i++) expected.update(Buffer.alloc(65_536, i));
    assert.equal(hash.digest('hex'), expected.digest('hex'));
  });

  it('a POST body reaches the origin', async () => {
    const header = await payFor(`${base}/paid`); // same terms: /echo is 0.01 too
    const res = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'PAYMENT-SIGNATURE': header, 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'rain' }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { data: PAID_BODY, body: '{"q":"rain"}' });
  });

  it('a POST that expects 100-continue is answered by the gate; the origin gets the body, not the expectation', async () => {
    // curl sends `Expect: 100-continue` with any body over 1 KiB; the gate reads the whole body before forwarding.
    const payload = JSON.stringify({ q: 'r'.repeat(2048) });
    const res = await rawRequest(
      `${base}/echo`,
      { 'PAYMENT-SIGNATURE': await payFor(`${base}/paid`), 'content-type': 'application/json', Expect: '100-continue' },
      'POST',
      payload,
    );
    assert.equal(res.status, 200, res.body);
    assert.deepEqual(JSON.parse(res.body), { data: PAID_BODY, body: payload });
    assert.equal(origin.requests.at(-1)!.headers.expect, undefined);
  });

  it("the origin's own payment headers never reach the buyer; the receipt is the gate's", async () => {
    const res = await fetch(`${base}/forge`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/forge`) } });
    assert.equal(res.status, 200);
    assert.notEqual(res.headers.get('payment-response'), 'forged');
    assert.notEqual(res.headers.get('x-payment-response'), 'forged');
    assert.equal(res.headers.get('payment-response'), res.headers.get('x-payment-response'));
  });

  it('origin unreachable → 502 gate_origin_unreachable; nothing settled, the payment can be presented again', async () => {
    const header = await payFor(`${base}/paid`);
    const down = await closedPortUrl();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(down) });
    await gate.app.catalogue.refreshNow();
    const res = await fetch(`${base}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as { error_code: string }).error_code, 'gate_origin_unreachable');
    assert.equal(facilitator.callsTo('/verify').length, 1);
    assert.equal(facilitator.callsTo('/settle').length, 0);
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    await gate.app.catalogue.refreshNow();
    assert.equal((await fetch(`${base}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } })).status, 200);
    await gate.app.ledger.flush();
    assert.equal(ledgerRows().length, 1);
  });

  it('origin too slow → 504 gate_origin_timeout; origin dying mid-request → 502; nothing settled', async () => {
    const slow = await fetch(`${base}/slow`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/slow`) } });
    assert.equal(slow.status, 504);
    assert.equal(((await slow.json()) as { error_code: string }).error_code, 'gate_origin_timeout');
    const dies = await fetch(`${base}/throws`, {
      headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/throws`) },
    });
    assert.equal(dies.status, 502);
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });

  it('an answer cut or stalled after its headers, while it is held: 502 or 504, nothing of it sent, nothing settled', async () => {
    const cut = await fetch(`${base}/cut`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/cut`) } });
    assert.equal(cut.status, 502);
    assert.equal(((await cut.json()) as { error_code: string }).error_code, 'gate_origin_unreachable');
    const stall = await fetch(`${base}/stall`, { headers: { 'PAYMENT-SIGNATURE': await payFor(`${base}/stall`) } });
    assert.equal(stall.status, 504);
    assert.equal(((await stall.json()) as { error_code: string }).error_code, 'gate_origin_timeout');
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });

  it('request bodies over the cap: 413 before any payment check (declared), or cut and unsettled (chunked)', async () => {
    await gate.stop();
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_MAX_REQUEST_BYTES: '16' });
    base = `${gate.url}/${GATE_SLUG}`;
    const declared = await fetch(`${base}/echo`, { method: 'POST', body: 'x'.repeat(64) });
    assert.equal(declared.status, 413);
    assert.equal(facilitator.calls.length, 0);
    const header = await payFor(`${base}/paid`);
    const chunked = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'PAYMENT-SIGNATURE': header },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode('y'.repeat(8)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });

  it('routing: unknown slug and unknown endpoint are 404; a host under the base domain names the seller', async () => {
    const unknownSeller = await fetch(`${gate.url}/nobody/paid`);
    assert.equal(unknownSeller.status, 404);
    assert.equal(((await unknownSeller.json()) as { error_code: string }).error_code, 'gate_seller_not_found');
    const unknownPath = await fetch(`${base}/not-sold`);
    assert.equal(unknownPath.status, 404);
    assert.equal(((await unknownPath.json()) as { error_code: string }).error_code, 'gate_endpoint_not_found');
    const byHost = await rawRequest(`${gate.url}/paid`, { Host: `${GATE_SLUG}.gate.test` });
    assert.equal(byHost.status, 402);
    const challenge = JSON.parse(byHost.body) as PaymentRequired;
    assert.equal(challenge.accepts[0]!.amount, '10000');
    const paid = await rawRequest(`${gate.url}/paid`, {
      Host: `${GATE_SLUG}.gate.test`,
      'PAYMENT-SIGNATURE': encodePaymentPayload(await signExactPayment(challenge.accepts[0]!)),
    });
    assert.equal(paid.status, 200);
    assert.equal(origin.requests.at(-1)!.url, '/paid');
    assert.equal(origin.requests.at(-1)!.headers['x-forwarded-prefix'], undefined);
  });

  it('several sellers, one gate: each by its own prefix, with its own prices, pay-to and origin', async () => {
    const second = await startOrigin();
    try {
      const news = tableCatalogue(second.url).sellers[0]!;
      const otherPayTo = '0x1111111111111111111111111111111111111111';
      const both = tableCatalogue(origin.url);
      both.sellers.push({
        ...news,
        seller_id: 'sel_000000000000000000000002',
        slug: 'news',
        pay_to: otherPayTo,
        endpoints: [catalogueEndpoint('/paid', '0.05')],
      });
      platform.on('/v1/gate/catalogue', { status: 200, body: both });
      await gate.app.catalogue.refreshNow();
      const weather = (await (await fetch(`${base}/paid`)).json()) as PaymentRequired;
      const other = (await (await fetch(`${gate.url}/news/paid`)).json()) as PaymentRequired;
      assert.deepEqual(
        [weather.accepts[0]!.amount, weather.accepts[0]!.payTo.toLowerCase()],
        ['10000', '0x209693bc6afc0c5328ba36faf03c514ef312287c'],
      );
      assert.deepEqual([other.accepts[0]!.amount, other.accepts[0]!.payTo.toLowerCase()], ['50000', otherPayTo]);
      // A payment made out to one seller does not buy the other's route.
      const forWeather = encodePaymentPayload(await signExactPayment(weather.accepts[0]!));
      const crossed = await fetch(`${gate.url}/news/paid`, { headers: { 'PAYMENT-SIGNATURE': forWeather } });
      assert.equal(crossed.status, 402);
      const paid = await fetch(`${gate.url}/news/paid`, {
        headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(await signExactPayment(other.accepts[0]!)) },
      });
      assert.equal(paid.status, 200);
      assert.equal(second.runs, 1);
      assert.equal(origin.runs, 0);
      await gate.app.ledger.flush();
      assert.equal(ledgerRows()[0]?.endpoint_id, both.sellers[1]!.endpoints[0]!.endpoint_id);
    } finally {
      await second.stop();
    }
  });

  it('a suspended seller, or one without a pay-to, answers paid routes as the middleware does (500); free ones pass', async () => {
    for (const overrides of [{ status: 'suspended' as const }, { pay_to: null }]) {
      platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url, overrides) });
      await gate.app.catalogue.refreshNow();
      const paid = await fetch(`${base}/paid`);
      assert.equal(paid.status, 500, JSON.stringify(overrides));
      assert.equal(((await paid.json()) as { error_code: string }).error_code, 'seller_misconfigured');
      assert.equal((await fetch(`${base}/free`)).status, 200);
    }
  });

  it('not ready (503) until the first catalogue; a failed or malformed read keeps the last good one', async () => {
    const empty = await startFakes();
    empty.platform.on('/v1/gate/catalogue', { status: 503, body: {} });
    const early = await startTestGate(empty.platform, { FACILITATOR_URL: facilitator.url });
    try {
      assert.equal((await fetch(`${early.url}/readyz`)).status, 503);
      const res = await fetch(`${early.url}/${GATE_SLUG}/paid`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.equal(((await res.json()) as { error_code?: string }).error_code, 'gate_not_ready');
      empty.platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
      await early.app.catalogue.refreshNow();
      assert.equal((await fetch(`${early.url}/readyz`)).status, 200);
      for (const reply of [
        { status: 401, body: { error_code: 'invalid_token' } },
        { status: 200, body: { sellers: 'no' } },
      ]) {
        empty.platform.on('/v1/gate/catalogue', reply);
        assert.equal(await early.app.catalogue.refreshNow(), false);
        assert.equal((await fetch(`${early.url}/${GATE_SLUG}/paid`)).status, 402, 'the last good catalogue is kept');
      }
      assert.equal(
        empty.platform
          .callsTo('/v1/gate/catalogue')
          .every((c) => c.headers.authorization?.startsWith('Bearer xx_pat_')),
        true,
      );
    } finally {
      await early.stop();
      await Promise.all([empty.facilitator.stop(), empty.platform.stop()]);
    }
  });
});

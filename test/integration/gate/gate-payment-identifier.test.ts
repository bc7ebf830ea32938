/**
 * x402 `payment-identifier` through the gate with the platform's PostgreSQL store (the real API, its
 * `/v1/gate/payment-ids/…` routes and the seller_payment_ids table), the official x402 client building the
 * payments (`onBeforePaymentCreation` + `appendPaymentIdentifierToExtensions`) and a facilitator that counts
 * settlements:
 * - a lost answer resent to the same gate, or to a second gate process, gets the stored answer: one settlement,
 *   the origin asked once, the PAYMENT-RESPONSE replayed; an origin's gzip answer is replayed as gzip, its
 *   Content-Encoding kept (the stored body is the bytes the origin sent);
 * - another payment under the same id (the same payer's, or a stranger's) → 409, nothing served or settled;
 * - GATE_PAYMENT_ID_REQUIRED=1 and no id → 400; hostile ids → 400, nothing stored;
 * - the routes keep tenants apart: another account's gate cannot claim on the seller's endpoint, and another
 *   seller's service PAT sees its own ids only.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { x402HTTPClient } from '@x402/core/client';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { useTestTreasury } from '../../support/api-harness.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { officialClient } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { startTestGate, type TestGate } from './gate-fakes.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as { any: unknown[]; identifier: string[] };

const DOCUMENT = { openapi: '3.1.0', paths: { '/report': { get: { operationId: 'report', 'x-price-usd': '0.01' } } } };

async function startSellerOrigin() {
  const state = { url: '', token: '', served: 0 };
  const server = http.createServer((req, res) => {
    if (req.url === '/openapi.json') return void res.end(JSON.stringify(DOCUMENT));
    if (req.url === '/.well-known/xx-verification.txt') return void res.end(state.token);
    state.served += 1;
    const report = JSON.stringify({ report: 'q3', n: state.served });
    // `?encoding=gzip`: compressed as a compressing origin does, for a buyer who accepts it.
    if (req.url?.endsWith('?encoding=gzip') && /\bgzip\b/.test(String(req.headers['accept-encoding'])))
      return void res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', vary: 'Accept-Encoding' })
        .end(gzipSync(report));
    res.writeHead(200, { 'content-type': 'application/json' }).end(report);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { state, server };
}

describe('gate: payment-identifier with the platform store', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let origin: Awaited<ReturnType<typeof startSellerOrigin>>;
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  const gates: TestGate[] = [];
  let seller: { seller_id: string; slug: string; pat: string };
  let endpointId: string;
  let gatePat: string;
  let url: (gate: TestGate) => string;

  before(async () => {
    origin = await startSellerOrigin();
    fakes = await startFakes();
    const me = await signInWithNewKey(t);
    const created = await t.request('POST', '/v1/sellers', {
      token: me.session,
      body: {
        name: 'Reports',
        protocol: 'mpp',
        origin: origin.state.url,
        openapi_url: `${origin.state.url}/openapi.json`,
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    seller = created.body;
    await provePayTo(t, me.session, seller.seller_id, privateKeyToAccount(generatePrivateKey()));
    const route = `/v1/sellers/${seller.seller_id}/verify`;
    origin.state.token = (await t.request('GET', route, { token: seller.pat })).body.token;
    assert.equal((await t.request('POST', route, { token: seller.pat })).status, 200);
    endpointId = (await t.request('GET', `/v1/sellers/${seller.seller_id}/endpoints`, { token: seller.pat })).body
      .endpoints[0].endpoint_id;
    gatePat = (await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'gate' } })).body.pat;
    const env = { GATE_TOKEN: gatePat, FACILITATOR_URL: fakes.facilitator.url, GATE_PLATFORM_TIMEOUT_MS: '5000' };
    gates.push(await startTestGate({ url: t.baseUrl }, env));
    gates.push(await startTestGate({ url: t.baseUrl }, env));
    gates.push(await startTestGate({ url: t.baseUrl }, { ...env, GATE_PAYMENT_ID_REQUIRED: '1' }));
    url = (gate) => `${gate.url}/${seller.slug}/report`;
  });
  after(async () => {
    for (const gate of gates) await gate.stop();
    origin.server.closeAllConnections();
    await new Promise((resolve) => origin.server.close(resolve));
    await Promise.all([fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  /** A payment header for `at`'s challenge by a fresh (or given) payer, carrying `id` (undefined: none). */
  async function payment(at: string, id: string | undefined, account = privateKeyToAccount(generatePrivateKey())) {
    const client = officialClient(account);
    client.onBeforePaymentCreation(async ({ paymentRequired }) => {
      if (id !== undefined && paymentRequired.extensions)
        appendPaymentIdentifierToExtensions(paymentRequired.extensions, id);
    });
    const http = new x402HTTPClient(client);
    const challenge = await fetch(at);
    const required = http.getPaymentRequiredResponse((n) => challenge.headers.get(n), await challenge.json());
    return { headers: http.encodePaymentSignatureHeader(await http.createPaymentPayload(required)), account };
  }
  const settled = () => fakes.facilitator.callsTo('/settle').length;
  const storedRows = async () => Number((await t.db.knex('seller_payment_ids').count({ n: '*' }))[0]!.n);

  it('a lost answer resent to the same gate or another gate process: the stored answer, one settlement', async () => {
    const [a, b] = [gates[0]!, gates[1]!];
    const { headers } = await payment(url(a), generatePaymentId());
    const [settledBefore, servedBefore] = [settled(), origin.state.served];
    const first = await fetch(url(a), { headers });
    const body = await first.text();
    assert.equal(first.status, 200, body);
    assert.ok(first.headers.get('payment-response'));
    for (const gate of [a, b]) {
      const retry = await fetch(url(gate), { headers });
      assert.equal(retry.status, 200);
      assert.equal(await retry.text(), body);
      assert.equal(retry.headers.get('payment-response'), first.headers.get('payment-response'));
      assert.equal(retry.headers.get('content-type'), 'application/json');
    }
    assert.equal(settled(), settledBefore + 1, 'settled once');
    assert.equal(origin.state.served, servedBefore + 1, 'the origin was asked once');
  });

  it("an origin's gzip answer resent under its id: replayed with its Content-Encoding, the same report", async () => {
    const gate = gates[0]!;
    const at = `${url(gate)}?encoding=gzip`;
    const { headers } = await payment(at, generatePaymentId());
    const [settledBefore, servedBefore] = [settled(), origin.state.served];
    // fetch asks for gzip (Accept-Encoding), the gate forwards the ask, and fetch decodes what comes back.
    const first = await fetch(at, { headers });
    const report = await first.text();
    assert.equal(first.status, 200, report);
    assert.equal(first.headers.get('content-encoding'), 'gzip', 'the origin compressed its answer');
    const retry = await fetch(at, { headers });
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get('content-encoding'), 'gzip');
    assert.equal(retry.headers.get('vary'), 'Accept-Encoding');
    assert.equal(await retry.text(), report, 'the replayed bytes decode to the same report');
    assert.deepEqual([settled(), origin.state.served], [settledBefore + 1, servedBefore + 1]);
  });

  it('another payment under the same id, by the payer or a stranger → 409, nothing served or settled', async () => {
    const gate = gates[0]!;
    const id = generatePaymentId();
    const owner = await payment(url(gate), id);
    assert.equal((await fetch(url(gate), { headers: owner.headers })).status, 200);
    const before = [settled(), origin.state.served];
    for (const other of [await payment(url(gate), id, owner.account), await payment(url(gates[1]!), id)]) {
      const res = await fetch(url(gates[1]!), { headers: other.headers });
      assert.equal(res.status, 409);
      const text = await res.text();
      assert.ok(!text.includes('q3'), 'the stored answer is not served');
      assert.equal(JSON.parse(text).error_code, 'payment_identifier_conflict');
    }
    assert.deepEqual([settled(), origin.state.served], before);
  });

  it('GATE_PAYMENT_ID_REQUIRED=1 and a payment without an id → 400; hostile ids → 400, nothing stored', async () => {
    const required = gates[2]!;
    const challenge = (await (await fetch(url(required))).json()) as { extensions: Record<string, any> };
    assert.equal(challenge.extensions['payment-identifier'].info.required, true);
    const without = await fetch(url(required), { headers: (await payment(url(required), undefined)).headers });
    assert.equal(without.status, 400);
    assert.equal(((await without.json()) as { error_code: string }).error_code, 'payment_identifier_required');

    const [rows, before] = [await storedRows(), settled()];
    const { headers } = await payment(url(gates[0]!), generatePaymentId());
    const name = Object.keys(headers)[0]!;
    const payload = JSON.parse(Buffer.from(headers[name]!, 'base64').toString('utf8'));
    for (const id of [...hostile.identifier, ...hostile.any, 'a'.repeat(15), 'a'.repeat(129), 'pay_1234567890.abcd']) {
      payload.extensions['payment-identifier'].info.id = id;
      const header = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
      const res = await fetch(url(gates[0]!), { headers: { [name]: header } });
      assert.equal(res.status, 400, `id ${JSON.stringify(id)?.slice(0, 40)}`);
    }
    assert.deepEqual([await storedRows(), settled()], [rows, before], 'nothing stored, nothing settled');
  });

  it("the store's routes keep tenants apart", async () => {
    const id = generatePaymentId();
    const claim = { route: '/report', id, fingerprint: 'ab'.repeat(32), pending_ttl_seconds: 60 };
    const mine = await t.request('POST', '/v1/gate/payment-ids/begin', {
      token: gatePat,
      body: { ...claim, endpoint_id: endpointId },
    });
    assert.deepEqual([mine.status, mine.body.outcome], [200, 'new']);
    const stranger = await signInWithNewKey(t);
    const theirGate = (await t.request('POST', '/v1/pats', { token: stranger.session, body: { scope_type: 'gate' } }))
      .body.pat;
    const refused = await t.request('POST', '/v1/gate/payment-ids/begin', {
      token: theirGate,
      body: { ...claim, endpoint_id: endpointId },
    });
    assert.deepEqual([refused.status, refused.body.error_code], [404, 'endpoint_not_found']);
    const theirSeller = (
      await t.request('POST', '/v1/sellers', { token: stranger.session, body: { name: 'Other', slug: 'other-pid' } })
    ).body;
    const own = await t.request('POST', '/v1/payment-ids/begin', { token: theirSeller.pat, body: claim });
    assert.deepEqual([own.status, own.body.outcome], [200, 'new'], "another seller's namespace");
    const again = await t.request('POST', '/v1/payment-ids/begin', { token: theirSeller.pat, body: claim });
    assert.deepEqual([again.status, again.body.outcome], [200, 'in_flight']);
    const session = await t.request('POST', '/v1/payment-ids/begin', { token: stranger.session, body: claim });
    assert.equal(session.status, 403);
  });

  it('a hostile route or stored header value is refused at the store’s routes: 400, nothing stored', async () => {
    const seller = (
      await t.request('POST', '/v1/sellers', {
        token: (await signInWithNewKey(t)).session,
        body: { name: 'Hostile', slug: 'hostile-pid' },
      })
    ).body;
    const rows = await storedRows();
    const claim = (route: string) => ({ route, id: generatePaymentId(), fingerprint: 'cd'.repeat(32) });
    for (const route of [
      '/a\u001b[31m',
      '/a\r\nx',
      '/\u202etxt.exe',
      '/' + '\u4e2d'.repeat(2000),
      'no-slash',
      '/a b',
    ]) {
      const res = await t.request('POST', '/v1/payment-ids/begin', {
        token: seller.pat,
        body: { ...claim(route), pending_ttl_seconds: 60 },
      });
      assert.deepEqual([res.status, res.body.error_code], [400, 'invalid_request'], JSON.stringify(route).slice(0, 30));
    }
    const good = claim('/report');
    assert.equal(
      (
        await t.request('POST', '/v1/payment-ids/begin', {
          token: seller.pat,
          body: { ...good, pending_ttl_seconds: 60 },
        })
      ).status,
      200,
    );
    for (const value of ['a\r\nSet-Cookie: x=1', 'a\u0000b', 'caf\u00e9']) {
      const res = await t.request('POST', '/v1/payment-ids/complete', {
        token: seller.pat,
        body: { ...good, answer: { status: 200, headers: { 'content-type': value } } },
      });
      assert.deepEqual([res.status, res.body.error_code], [400, 'invalid_request'], JSON.stringify(value));
    }
    assert.equal((await storedRows()) - rows, 1, 'only the plain claim is stored, and nothing completed it');
  });
});

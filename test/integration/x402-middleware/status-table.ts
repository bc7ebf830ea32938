/**
 * The paywall's runtime answers table (docs/seller-middleware.md#rules-and-runtime-answers) as ONE table of
 * cases, run against every front that applies the paywall: the Koa middleware (runtime-status.test.ts) and the
 * gate (test/integration/gate/gate-status-table.test.ts). Each front gives a `PaywallFront`: how to start it in
 * front of a fake facilitator and platform, with a seller whose paid route `/paid` costs 0.01, `/premium` 2.5,
 * `/free` and `/also-free` nothing, and whose handler (or origin) answers every path with PAID_BODY. In every
 * refusal the handler never runs and its body never appears in the response.
 */
import assert from 'node:assert/strict';
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { lateBound } from '../../support/late-bound.js';
import { hostile, signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { closedPortUrl, PAID_BODY, startFakes, TX_HASH, type FakeServer, type Recorded } from './x402-fakes.js';

/** The paywall in front of a seller, as the cases see it. */
export interface PaywallUnderTest {
  /** Base URL of the seller's paths (`${url}/paid`). */
  url: string;
  /** How many times the seller's handler (or origin) ran. */
  readonly handlerRuns: number;
  /** Waits for queued ledger reports. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/** Which facilitator the front is given, and the environment switches of the paywall. */
export interface FrontVariant {
  facilitatorUrl: string | undefined;
  env: Record<string, string>;
}

export interface PaywallFront {
  name: string;
  start(variant: FrontVariant, fakes: { facilitator: FakeServer; platform: FakeServer }): Promise<PaywallUnderTest>;
  /** A platform call the paywall makes for paid traffic (not e.g. the gate's catalogue reads). */
  isPaywallCall(call: Recorded): boolean;
  /** Platform paths ledger rows go to. */
  ledgerPaths: readonly string[];
}

async function challengeOf(app: PaywallUnderTest, path = '/paid'): Promise<PaymentRequired> {
  const res = await fetch(`${app.url}${path}`);
  assert.equal(res.status, 402);
  return (await res.json()) as PaymentRequired;
}

async function payHeader(app: PaywallUnderTest, path = '/paid'): Promise<string> {
  const c = await challengeOf(app, path);
  return encodePaymentPayload(await signExactPayment(c.accepts[0]!));
}

/** Registers the table's cases (one `it` each) for `front`. */
export function describeStatusTable(front: PaywallFront): void {
  let current: { facilitator: FakeServer; platform: FakeServer; app: PaywallUnderTest } | undefined;
  beforeEach(async () => {
    const fakes = await startFakes();
    current = { ...fakes, app: await front.start({ facilitatorUrl: fakes.facilitator.url, env: {} }, fakes) };
  });
  afterEach(async () => {
    if (!current) return;
    const { facilitator, platform, app } = current;
    await app.flush();
    await Promise.all([app.stop(), facilitator.stop(), platform.stop()]);
    current = undefined;
  });
  const facilitator = lateBound(() => current?.facilitator, 'the fake facilitator');
  const platform = lateBound(() => current?.platform, 'the fake platform');
  const app = lateBound(() => current?.app, 'the paywall under test');
  const paywallCalls = () => platform.calls.filter((c) => front.isPaywallCall(c));
  const ledgerCalls = () => platform.calls.filter((c) => front.ledgerPaths.includes(c.path));

  /** Runs `use` against the front started with `variant` on the current fakes, and stops it after. */
  async function withVariant(variant: FrontVariant, use: (other: PaywallUnderTest) => Promise<void>): Promise<void> {
    const started = await front.start(variant, { facilitator, platform });
    try {
      await use(started);
    } finally {
      await started.flush();
      await started.stop();
    }
  }

  it('/health and free routes ("0" and "") pass through untouched, without any x402 header or call', async () => {
    for (const path of ['/health', '/free', '/also-free']) {
      const res = await fetch(`${app.url}${path}`);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('payment-required'), null);
      assert.equal(res.headers.get('payment-response'), null);
    }
    assert.equal(app.handlerRuns, 3);
    assert.equal(facilitator.calls.length, 0);
    assert.equal(paywallCalls().length, 0);
  });

  it('402 with PAYMENT-REQUIRED and X-PAYMENT-REQUIRED (same value, same JSON as the body), raw amount, no-store', async () => {
    const res = await fetch(`${app.url}/paid?q=1`);
    assert.equal(res.status, 402);
    const header = res.headers.get('payment-required')!;
    assert.equal(res.headers.get('x-payment-required'), header);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = await res.json();
    assert.deepEqual(decodePaymentRequiredHeader(header), body);
    const accept = (body as PaymentRequired).accepts[0]!;
    assert.equal(accept.amount, '10000'); // 0.01 USD in 6-decimal raw units
    assert.equal(accept.scheme, 'exact');
    assert.equal(accept.network, 'eip155:84532');
    assert.equal(accept.asset, '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
    assert.deepEqual(accept.extra, { name: 'USDC', version: '2' });
    assert.equal(accept.maxTimeoutSeconds, 300);
    assert.equal(accept.resource, `${app.url}/paid?q=1`);
    assert.equal((body as PaymentRequired).resource.url, `${app.url}/paid?q=1`);
    assert.equal((await challengeOf(app, '/premium')).accepts[0]!.amount, '2500000');
    assert.equal(
      (await challengeOf(app, '/PREMIUM/')).accepts[0]!.amount,
      '2500000',
      'price lookup ignores case and trailing slash',
    );
    assert.equal(app.handlerRuns, 0);
  });

  it('400 invalid_payment_header when the header is not base64 JSON; the handler never runs', async () => {
    for (const value of [
      '!!!!',
      'e30-_',
      'eyJ4NDAyVmVyc2lvbiI6Mn0',
      Buffer.from('{"__proto__":{"a":1}}').toString('base64'),
    ]) {
      const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': value } });
      assert.equal(res.status, 400, value);
      const body = (await res.json()) as { error_code: string };
      assert.equal(body.error_code, 'invalid_payment_header');
    }
    assert.equal(app.handlerRuns, 0);
    assert.equal(facilitator.calls.length, 0);
  });

  it('hostile headers from the shared table give 400 or 402 and never reach the handler', async () => {
    const values = [
      ...(hostile.base64_header as string[]),
      ...(hostile.any as unknown[]).map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64')),
      'A'.repeat(17 * 1024),
    ];
    for (const value of values) {
      for (const name of ['PAYMENT-SIGNATURE', 'X-PAYMENT']) {
        let res: Response;
        try {
          res = await fetch(`${app.url}/paid`, { headers: { [name]: value } });
        } catch {
          continue; // a header Node's fetch itself refuses to send
        }
        assert.ok(
          res.status === 400 || res.status === 402 || res.status === 431,
          `${name}=${value.slice(0, 30)} → ${res.status}`,
        );
        assert.ok(!(await res.text()).includes(PAID_BODY));
      }
    }
    assert.equal(app.handlerRuns, 0);
  });

  it('402 re-issued with an error for a payment that does not match the route (and no facilitator call)', async () => {
    const accepted = (await challengeOf(app)).accepts[0]!;
    const cases: Array<[string, Parameters<typeof signExactPayment>[0], Parameters<typeof signExactPayment>[1]]> = [
      ['amount', { ...accepted, amount: '1' }, {}],
      ['payTo', { ...accepted, payTo: '0x1111111111111111111111111111111111111111' }, {}],
      ['network', { ...accepted, network: 'eip155:8453' }, {}],
      ['asset', { ...accepted, asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' }, {}],
      ['maxTimeoutSeconds', { ...accepted, maxTimeoutSeconds: 3600 }, {}],
      ['extra.version dropped', { ...accepted, extra: { name: 'USDC', version: '1' } }, {}],
      ['scheme', { ...accepted, scheme: 'upto' }, {}],
      ['authorization value', accepted, { value: '1' }],
      ['authorization recipient', accepted, { to: '0x1111111111111111111111111111111111111111' }],
    ];
    for (const [what, acc, overrides] of cases) {
      const header = encodePaymentPayload(await signExactPayment(acc, overrides));
      const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(res.status, 402, what);
      const body = (await res.json()) as PaymentRequired;
      assert.match(body.error ?? '', /^no_matching_payment_requirements/, what);
      assert.ok(res.headers.get('payment-required'));
    }
    // Address case does not matter.
    const lower = encodePaymentPayload(
      await signExactPayment({
        ...accepted,
        payTo: accepted.payTo.toLowerCase(),
        asset: accepted.asset.toUpperCase().replace('0X', '0x'),
      }),
    );
    assert.equal((await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': lower } })).status, 200);
    assert.equal(facilitator.callsTo('/verify').length, 1);
  });

  it('402 re-issued when the facilitator answers isValid:false; the handler never runs', async () => {
    facilitator.on('/verify', { body: { isValid: false, invalidReason: 'invalid_exact_evm_signature' } });
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': await payHeader(app) } });
    assert.equal(res.status, 402);
    assert.equal(((await res.json()) as PaymentRequired).error, 'invalid_exact_evm_signature');
    assert.equal(app.handlerRuns, 0);
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });

  for (const [label, reply] of [
    ['answers 5xx', { status: 503, body: { error: 'down' } }],
    ['is slower than the verify time-out', { delayMs: 10_000, body: { isValid: true } }],
    ['drops the connection', 'drop'],
    ['answers a malformed 2xx', { status: 200, raw: '<html>ok</html>' }],
    ['redirects', { status: 308, body: {} }],
  ] as const) {
    it(`402 re-issued when the facilitator ${label} at verify; the body never leaves`, async () => {
      facilitator.on('/verify', reply);
      const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': await payHeader(app) } });
      assert.equal(res.status, 402);
      const text = await res.text();
      assert.ok(!text.includes(PAID_BODY));
      assert.equal(JSON.parse(text).error, 'facilitator_unavailable');
      assert.equal(app.handlerRuns, 0);
      // Bounded by the verify time-out, as an order rather than a wall-clock budget: the 402 came while the slow
      // facilitator's reply, 10 s out (far past any verify time-out, and past what load adds), was still pending.
      if (typeof reply === 'object' && reply.delayMs)
        assert.equal(facilitator.callsTo('/verify')[0]?.answeredAt, undefined, 'waited for the slow reply');
    });
  }

  it('402 re-issued when the facilitator is unreachable (connection refused)', async () => {
    await withVariant({ facilitatorUrl: await closedPortUrl(), env: {} }, async (down) => {
      const res = await fetch(`${down.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': await payHeader(down) } });
      assert.equal(res.status, 402);
      assert.ok(!(await res.text()).includes(PAID_BODY));
      assert.equal(down.handlerRuns, 0);
    });
  });

  it('503 with Retry-After: 5 when no facilitator is configured and XX_ALLOW_LOCAL_ONLY is not 1', async () => {
    await withVariant({ facilitatorUrl: undefined, env: { XX_ALLOW_LOCAL_ONLY: '0' } }, async (none) => {
      const res = await fetch(`${none.url}/paid`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '5');
      assert.equal(((await res.json()) as { error_code: string }).error_code, 'facilitator_not_configured');
      assert.equal((await fetch(`${none.url}/health`)).status, 200);
      assert.equal(none.handlerRuns, 1);
    });
  });

  it('XX_ALLOW_LOCAL_ONLY=1 without a facilitator: a well-formed payment is served unverified, and the receipt says so', async () => {
    await withVariant({ facilitatorUrl: undefined, env: { XX_ALLOW_LOCAL_ONLY: '1' } }, async (local) => {
      const c = await challengeOf(local);
      const res = await fetch(`${local.url}/paid`, {
        headers: { 'X-PAYMENT': encodePaymentPayload(await signExactPayment(c.accepts[0]!)) },
      });
      assert.equal(res.status, 200);
      assert.ok((await res.text()).includes(PAID_BODY));
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      assert.equal(receipt.transaction, '');
      assert.equal(receipt.errorReason, 'local_only_unverified');
      const expired = encodePaymentPayload(await signExactPayment(c.accepts[0]!, { validBefore: '1000' }));
      assert.equal((await fetch(`${local.url}/paid`, { headers: { 'X-PAYMENT': expired } })).status, 402);
      await local.flush();
      assert.equal(ledgerCalls().length, 0, 'nothing settled, nothing reported');
    });
  });

  it('200 after verify and settle: body, PAYMENT-RESPONSE = X-PAYMENT-RESPONSE with txHash and payer', async () => {
    const header = await payHeader(app);
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { data: PAID_BODY, path: '/paid' });
    const receiptHeader = res.headers.get('payment-response')!;
    assert.equal(res.headers.get('x-payment-response'), receiptHeader);
    const receipt = decodePaymentResponseHeader(receiptHeader) as unknown as Record<string, unknown>;
    assert.equal(receipt.success, true);
    assert.equal(receipt.transaction, TX_HASH);
    assert.equal(receipt.txHash, TX_HASH);
    assert.equal(receipt.network, 'eip155:84532');
    assert.match(String(receipt.payer), /^0x[0-9a-fA-F]{40}$/);
    assert.equal(res.headers.get('cache-control'), 'private');
    const [verify] = facilitator.callsTo('/verify');
    assert.equal(verify!.body.x402Version, 2);
    assert.deepEqual(Object.keys(verify!.body.paymentRequirements).sort(), [
      'amount',
      'asset',
      'extra',
      'maxTimeoutSeconds',
      'network',
      'payTo',
      'scheme',
    ]);
    assert.ok(facilitator.callsTo('/settle')[0]!.at >= verify!.at);
    await app.flush();
    assert.ok(ledgerCalls().length >= 1, 'the settled payment is reported');
  });

  it('402 re-issued with a success:false receipt when settlement fails; the body and handler headers never leave', async () => {
    facilitator.on('/settle', { body: { success: false, errorReason: 'insufficient_funds', transaction: '' } });
    const res = await fetch(`${app.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': await payHeader(app) } });
    assert.equal(res.status, 402);
    const text = await res.text();
    assert.ok(!text.includes(PAID_BODY));
    assert.equal(res.headers.get('x-handler-secret'), null);
    const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
    assert.equal(receipt.success, false);
    assert.equal(app.handlerRuns, 1);
    await app.flush();
    assert.equal(ledgerCalls().length, 0, 'nothing settled, nothing reported');
  });

  it('a handler answer of 400 or above goes out as is and nothing is settled', async () => {
    const res = await fetch(`${app.url}/fail`, { headers: { 'PAYMENT-SIGNATURE': await payHeader(app, '/fail') } });
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('payment-response'), null);
    assert.equal(facilitator.callsTo('/settle').length, 0);
  });
}

/** The Koa middleware's and the gate's common seller: prices by path. */
export const TABLE_ROUTE_PRICES = { '/free': '0', '/also-free': '', '/premium': '2.5' } as const;

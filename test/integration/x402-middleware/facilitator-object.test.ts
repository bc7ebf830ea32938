/**
 * The middleware with a facilitator object (the official `FacilitatorClient` shape) instead of a URL: a
 * positive reply settles and serves; a throw, a hang past the time-out, or a malformed reply is a 402 and
 * the handler's body never leaves unpaid; configuration refuses an object without methods and both forms at once.
 */
import assert from 'node:assert/strict';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import { x402Koa, X402ConfigError } from '../../../src/x402/koa/index.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, startFakes, startSellerApp, TX_HASH, type FakeServer, type SellerApp } from './x402-fakes.js';

type Reply = () => Promise<unknown>;

function facilitatorObject(verify: Reply, settle: Reply) {
  const calls: string[] = [];
  return {
    calls,
    verify: async (payload: unknown, requirements: unknown) => {
      assert.ok(payload && requirements, 'payload and requirements are passed');
      calls.push('verify');
      return verify();
    },
    settle: async () => {
      calls.push('settle');
      return settle();
    },
  };
}

const ok = (payer: string) => ({
  verify: async () => ({ isValid: true, payer }),
  settle: async () => ({ success: true, transaction: TX_HASH, network: 'eip155:84532', payer }),
});

describe('x402 Koa middleware: facilitator object', () => {
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  let app: SellerApp | undefined;

  beforeEach(async () => {
    fakes = await startFakes();
  });
  afterEach(async () => {
    await app?.middleware.flush();
    await app?.stop();
    app = undefined;
    await Promise.all([fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  async function paidRequest(a: SellerApp): Promise<Response> {
    const challenge = (await (await fetch(`${a.url}/paid`)).json()) as PaymentRequired;
    const payload = await signExactPayment(challenge.accepts[0]!);
    return fetch(`${a.url}/paid`, { headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(payload) } });
  }

  it('a positive verify and settle serve the body with a receipt; no facilitator URL is called', async () => {
    const payer = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
    const f = facilitatorObject(ok(payer).verify, ok(payer).settle);
    app = await startSellerApp({ facilitator: f, api_url: fakes.platform.url });
    const res = await paidRequest(app);
    assert.equal(res.status, 200);
    assert.match(await res.text(), new RegExp(PAID_BODY));
    assert.ok(res.headers.get('payment-response'));
    assert.deepEqual(f.calls, ['verify', 'settle']);
    assert.equal(fakes.facilitator.calls.length, 0);
  });

  const failures: Array<[string, Reply]> = [
    ['throws', async () => Promise.reject(new Error('boom'))],
    ['hangs past the time-out', () => new Promise((resolve) => setTimeout(() => resolve({ isValid: true }), 2_000))],
    ['answers a malformed reply', async () => ({ isValid: 'yes' })],
  ];
  for (const [what, reply] of failures) {
    it(`verify ${what} → 402 facilitator_unavailable, the handler does not run`, async () => {
      const f = facilitatorObject(reply, async () => ({ success: true, transaction: TX_HASH }));
      app = await startSellerApp({ facilitator: f, api_url: fakes.platform.url });
      const res = await paidRequest(app);
      assert.equal(res.status, 402);
      const text = await res.text();
      assert.ok(!text.includes(PAID_BODY));
      assert.equal(JSON.parse(text).error, 'facilitator_unavailable');
      assert.equal(app.handlerRuns, 0);
      assert.deepEqual(f.calls, ['verify']);
    });
    it(`settle ${what} → 402 with a success:false receipt, the held body is discarded`, async () => {
      const f = facilitatorObject(async () => ({ isValid: true }), reply);
      app = await startSellerApp({ facilitator: f, api_url: fakes.platform.url });
      const res = await paidRequest(app);
      assert.equal(res.status, 402);
      assert.ok(!(await res.text()).includes(PAID_BODY));
      assert.equal(app.handlerRuns, 1);
      assert.equal(fakes.platform.callsTo('/v1/ledger').length + fakes.platform.callsTo('/v1/ledger/batch').length, 0);
    });
  }

  it('configuration: an object without verify/settle, or both facilitator and facilitator_url, is refused at construction', () => {
    const base = {
      token: 'xx_pat_testtesttesttesttesttesttesttesttesttest123',
      price: '0.01',
      pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      api_url: 'http://127.0.0.1:1',
      env: {},
    };
    const problems = (opts: object) => {
      try {
        x402Koa({ ...base, ...opts });
      } catch (err) {
        assert.ok(err instanceof X402ConfigError);
        return err.problems.join('\n');
      }
      return '';
    };
    assert.match(
      problems({ facilitator: { verify: 1 } }),
      /facilitator must be an object with verify\(\) and settle\(\)/,
    );
    assert.match(
      problems({
        facilitator: ok('0x857b06519E91e3A54538791bDbb0E22373e36b66'),
        facilitator_url: 'http://127.0.0.1:2',
      }),
      /not both/,
    );
    assert.equal(problems({ facilitator: ok('0x857b06519E91e3A54538791bDbb0E22373e36b66') }), '');
  });
});

/**
 * The gate sells only origins the seller verified, on addresses it may reach (docs/gate.md): a catalogue seller
 * whose origin is not verified gets nothing forwarded (free routes 502 `gate_origin_refused`, paid ones 500
 * `seller_misconfigured`), and without GATE_ALLOW_PRIVATE_ORIGINS an origin on loopback — as an IP literal or as
 * a name that resolves there — is refused (502 `gate_origin_refused`, nothing settled). The other gate suites
 * set the switch explicitly (gate-fakes.ts); this one runs without it.
 */
import assert from 'node:assert/strict';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';

const errorCode = async (res: Response) => ((await res.json()) as { error_code?: string }).error_code;

describe('gate: verified, public origins only', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate | undefined;

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
  });
  afterEach(async () => {
    await gate?.stop();
    gate = undefined;
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  it('an origin the seller has not verified receives nothing, free or paid', async () => {
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url, { origin_verified: false }) });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url });
    const free = await fetch(`${gate.url}/${GATE_SLUG}/free`);
    assert.equal(free.status, 502);
    assert.equal(await errorCode(free), 'gate_origin_refused');
    const paid = await fetch(`${gate.url}/${GATE_SLUG}/paid`);
    assert.equal(paid.status, 500);
    assert.equal(await errorCode(paid), 'seller_misconfigured');
    assert.equal((await fetch(`${gate.url}/${GATE_SLUG}/health`)).status, 404);
    assert.equal(origin.runs, 0);
  });

  it('by default a loopback origin is refused, as an IP literal or a name; nothing is settled', async () => {
    const port = new URL(origin.url).port;
    for (const url of [origin.url, `http://localhost:${port}`]) {
      platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(url) });
      gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_ALLOW_PRIVATE_ORIGINS: '0' });
      const free = await fetch(`${gate.url}/${GATE_SLUG}/free`);
      assert.equal(free.status, 502, url);
      assert.equal(await errorCode(free), 'gate_origin_refused');
      const challenge = (await (await fetch(`${gate.url}/${GATE_SLUG}/paid`)).json()) as PaymentRequired;
      const header = encodePaymentPayload(await signExactPayment(challenge.accepts[0]!));
      const paid = await fetch(`${gate.url}/${GATE_SLUG}/paid`, { headers: { 'PAYMENT-SIGNATURE': header } });
      assert.equal(paid.status, 502, url);
      assert.equal(await errorCode(paid), 'gate_origin_refused');
      await gate.stop();
      gate = undefined;
    }
    assert.equal(origin.runs, 0);
    assert.equal(facilitator.callsTo('/settle').length, 0);
    // The operator's switch lets the same loopback origin through.
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_ALLOW_PRIVATE_ORIGINS: '1' });
    assert.equal((await fetch(`${gate.url}/${GATE_SLUG}/free`)).status, 200);
    assert.equal(origin.runs, 1);
  });
});

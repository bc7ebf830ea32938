/**
 * A buyer who leaves while the gate settles their payment: the payment is settled (the facilitator already
 * moved the funds), so its ledger row must reach the platform — exactly once — whether the origin's answer was
 * held whole or was larger than what the gate holds (an oversize answer is released as a stream that, the buyer
 * being gone, is destroyed before it is ever read; its row then carries no content hash, nothing having been
 * sent). Deterministic: the fake facilitator answers the settlement only once the gate has seen the buyer's
 * connection close.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { startFakes, TX_HASH, type FakeServer, type Recorded } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';

async function payFor(url: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 402, `${url} challenges`);
  const c = (await res.json()) as PaymentRequired;
  return encodePaymentPayload(await signExactPayment(c.accepts[0]!));
}

describe('gate: a buyer gone during settlement is still a settled, reported payment', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;
  /** Rows the platform stored: the fake has no batch route (404), so the reporter sends them one by one. */
  const ledgerRows = () => platform.callsTo('/v1/gate/ledger').map((c) => c.body as Record<string, unknown>);

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_SETTLE_TIMEOUT_MS: '20000' });
  });
  afterEach(async () => {
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  /** Pays for `path`, and drops the connection once the settlement call reached the facilitator. */
  async function leaveDuringSettlement(path: string): Promise<void> {
    const url = `${gate.url}/${GATE_SLUG}${path}`;
    const payment = await payFor(url);
    let gateSawClose: Promise<unknown> | undefined;
    gate.app.server.on('request', (req, res) => {
      if (req.headers['payment-signature']) gateSawClose = once(res, 'close');
    });
    let buyer: http.ClientRequest | undefined;
    facilitator.on('/settle', async (call: Recorded) => {
      buyer?.destroy();
      await gateSawClose;
      return {
        body: {
          success: true,
          transaction: TX_HASH,
          network: call.body?.paymentRequirements?.network,
          payer: call.body?.paymentPayload?.payload?.authorization?.from,
        },
      };
    });
    const request = (buyer = http.get(url, { headers: { 'PAYMENT-SIGNATURE': payment } }));
    request.on('error', () => undefined); // the hang-up is ours
    await new Promise((resolve) => request.once('close', resolve));
  }

  /** The ledger rows, once one arrived (the report follows the settlement by a few ticks), else after 10 s. */
  async function rowsReported(): Promise<Array<Record<string, unknown>>> {
    for (let waited = 0; ledgerRows().length === 0 && waited < 10_000; waited += 25) {
      await gate.app.ledger.flush();
      await sleep(25);
    }
    await gate.app.ledger.flush();
    return ledgerRows();
  }

  for (const [path, kind] of [
    ['/big-stream', 'larger than what is held'],
    ['/paid', 'held whole'],
  ] as const) {
    it(`an answer ${kind}: settled once, its ledger row reported once`, async () => {
      await leaveDuringSettlement(path);
      const rows = await rowsReported();
      assert.equal(facilitator.callsTo('/settle').length, 1);
      assert.equal(rows.length, 1, `ledger rows: ${JSON.stringify(rows)}`);
      assert.deepEqual([rows[0]!.tx_hash, rows[0]!.route], [TX_HASH, path]);
      if (path === '/big-stream') assert.equal(rows[0]!.content_hash, undefined, 'nothing was sent: no hash');
    });
  }
});

/**
 * A buyer who leaves after the origin was reached is charged for what the origin ran (docs/gate.md): the
 * payment is settled exactly once whether or not the buyer is still connected, the replay guard keeps it spent
 * (the same payment presented again is a replay, and the origin does not run again), and with a
 * `payment-identifier` the answer is kept so a retry under the id gets it without paying again.
 *
 * A buyer who leaves while the gate settles their payment: the payment is settled (the facilitator already
 * moved the funds), so its ledger row must reach the platform — exactly once — whether the origin's answer was
 * held whole or was larger than what the gate holds (an oversize answer is released as a stream that, the buyer
 * being gone, is destroyed before it is ever read; its row then carries no content hash, nothing having been
 * sent). Deterministic: the fake facilitator answers the settlement only once the gate has seen the buyer's
 * connection close; the buyer who leaves during the origin's run hangs up once the origin counted the request.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePaymentId } from '@x402/extensions/payment-identifier';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { PAID_BODY, startFakes, TX_HASH, type FakeServer, type Recorded } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';

/** A payment header for `url`'s challenge; with `id`, the payment carries it as its `payment-identifier`. */
async function payFor(url: string, id?: string): Promise<string> {
  const res = await fetch(url);
  assert.equal(res.status, 402, `${url} challenges`);
  const c = (await res.json()) as PaymentRequired;
  const payment = await signExactPayment(c.accepts[0]!);
  return encodePaymentPayload(
    id === undefined
      ? payment
      : { ...payment, extensions: { 'payment-identifier': { info: { required: false, id } } } },
  );
}

describe('gate: a buyer gone after the origin was reached is charged once, and only once', function () {
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
    gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_SETTLE_TIMEOUT_MS: '20000',
      GATE_PAYMENT_ID_STORE: 'memory',
    });
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

  /** The paywall's outcomes so far (treasury_x402_middleware_requests_total), by label. */
  async function outcomes(): Promise<Record<string, number>> {
    const { values } = await gate.app.metrics.paywall.requests.get();
    return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
  }
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

  /** Until the paywall counted one more outcome than `before` (the paid request it is handling is done). */
  async function oneMoreOutcome(before: Record<string, number>): Promise<Record<string, number>> {
    for (;;) {
      const now = await outcomes();
      if (total(now) > total(before)) return now;
      await sleep(5);
    }
  }

  type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

  /**
   * Presents `headers` for `path`, and hangs up as soon as the origin counted the request (`hung_up`); the
   * gate's answer when it came before the origin was reached.
   */
  async function presentAndLeave(path: string, headers: Record<string, string>): Promise<Answer | 'hung_up'> {
    const runs = origin.runs;
    let answeredAlready = false;
    let request: http.ClientRequest | undefined;
    const answered = new Promise<Answer>((resolve) => {
      request = http.get(`${gate.url}/${GATE_SLUG}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          answeredAlready = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() });
        });
      });
      request.on('error', () => undefined); // the hang-up is ours
    });
    const reached = (async () => {
      while (!answeredAlready && origin.runs === runs) await sleep(5);
      return 'reached' as const;
    })();
    const first = await Promise.race([answered, reached]);
    if (first !== 'reached' || answeredAlready) return answered;
    request!.destroy();
    return 'hung_up';
  }

  it('a buyer who hangs up while the origin runs is charged once; the same payment again is a replay', async () => {
    const payment = await payFor(`${gate.url}/${GATE_SLUG}/late`);
    let before = await outcomes();
    assert.equal(await presentAndLeave('/late', { 'PAYMENT-SIGNATURE': payment }), 'hung_up');
    const after = await oneMoreOutcome(before);
    const answers: Array<Answer | 'hung_up'> = [];
    for (let presented = 2; presented <= 3; presented++) {
      before = await outcomes();
      answers.push(await presentAndLeave('/late', { 'PAYMENT-SIGNATURE': payment }));
      await oneMoreOutcome(before);
    }
    assert.deepEqual(
      { originRuns: origin.runs, settlements: facilitator.callsTo('/settle').length },
      { originRuns: 1, settlements: 1 },
      'one signed payment, one run of the origin, one settlement',
    );
    assert.equal(after.settled, 1, `the first presentation settled: ${JSON.stringify(after)}`);
    for (const answer of answers) {
      assert.notEqual(answer, 'hung_up');
      const { status, body } = answer as Answer;
      assert.deepEqual([status, (JSON.parse(body) as PaymentRequired).error], [402, 'payment_already_used']);
    }
    const rows = await rowsReported();
    assert.equal(rows.length, 1, `ledger rows: ${JSON.stringify(rows)}`);
    assert.deepEqual([rows[0]!.tx_hash, rows[0]!.route], [TX_HASH, '/late']);
  });

  it('with a payment-identifier: the answer is kept, a retry under the id gets it without paying again', async () => {
    const payment = await payFor(`${gate.url}/${GATE_SLUG}/late`, generatePaymentId());
    const before = await outcomes();
    assert.equal(await presentAndLeave('/late', { 'PAYMENT-SIGNATURE': payment }), 'hung_up');
    await oneMoreOutcome(before);
    const retry = await presentAndLeave('/late', { 'PAYMENT-SIGNATURE': payment });
    assert.notEqual(retry, 'hung_up', 'the retry did not run the origin');
    const { status, headers, body } = retry as Answer;
    assert.deepEqual([status, body], [200, PAID_BODY]);
    assert.ok(headers['payment-response'], 'the receipt is replayed');
    assert.deepEqual([origin.runs, facilitator.callsTo('/settle').length], [1, 1]);
  });

  it('a buyer who leaves before the origin is reached is not charged, and the payment stays usable', async () => {
    const url = `${gate.url}/${GATE_SLUG}/late`;
    const payment = await payFor(url);
    let buyer: http.ClientRequest | undefined;
    let gateSawClose: Promise<unknown> | undefined;
    gate.app.server.on('request', (req, res) => {
      if (req.headers['payment-signature']) gateSawClose ??= once(res, 'close');
    });
    // The buyer hangs up while the payment is being verified; verify answers once the gate saw the hang-up.
    facilitator.on('/verify', async (call: Recorded) => {
      buyer?.destroy();
      await gateSawClose;
      return { body: { isValid: true, payer: call.body?.paymentPayload?.payload?.authorization?.from } };
    });
    const before = await outcomes();
    const request = (buyer = http.get(url, { headers: { 'PAYMENT-SIGNATURE': payment } }));
    request.on('error', () => undefined);
    await new Promise((resolve) => request.once('close', resolve));
    await oneMoreOutcome(before);
    assert.deepEqual([origin.runs, facilitator.callsTo('/settle').length], [0, 0], 'nothing ran, nothing settled');
    const paid = await fetch(url, { headers: { 'PAYMENT-SIGNATURE': payment } });
    assert.equal(paid.status, 200, 'the key was released: the payment is still good');
    assert.deepEqual([origin.runs, facilitator.callsTo('/settle').length], [1, 1]);
  });
});

/**
 * The pay routes' admission (src/api/pay/pay-admission.ts) as its callers see it: a payment past its tenant's
 * share and queue is refused 429 `pay_concurrency_exceeded` (Retry-After, its bounds named); past the process's
 * queue, or after the longest wait, 503 `pay_overloaded`; a waiting payment whose client closed the connection is
 * dropped unrun (`request_abandoned`); each refusal counted by reason, the waiting counted at scrape time. The
 * payment function of a refused payment is never called.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { PayAdmission } from '../../../src/api/pay/pay-admission.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';

/** A response whose connection the test closes ('close' before any answer: the client went away). */
const response = () => Object.assign(new EventEmitter(), { destroyed: false }) as unknown as ServerResponse;

/** A payment the test finishes by hand. */
function held() {
  let finish!: () => void;
  const done = new Promise<string>((resolve) => (finish = () => resolve('paid')));
  return { run: () => done, finish: () => finish() };
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('the payment was not refused');
}

const config = {
  inFlight: 2,
  inFlightPerAccount: 1,
  queuePerAccount: 1,
  queue: 2,
  queueWaitSeconds: 1,
  signerOtherInFlight: 64,
  chainReadsInFlight: 32,
};

describe('pay admission (per-tenant places, refusals)', () => {
  it("past its tenant's place and queue, a payment is refused 429 pay_concurrency_exceeded, never run", async () => {
    const metrics = createTreasuryMetrics();
    const admission = new PayAdmission(config, metrics);
    const first = held();
    const running = admission.run('acc_a', response(), first.run);
    const waiting = admission.run('acc_a', response(), async () => 'second');
    let ran = false;
    const err = await refusal(
      admission.run('acc_a', response(), async () => {
        ran = true;
      }),
    );
    assert.deepEqual(
      [err.code, err.status, err.fields, err.headers],
      [
        'pay_concurrency_exceeded',
        429,
        { in_flight_max: 1, queue_max: 1, retry_after_seconds: 1 },
        { 'Retry-After': '1' },
      ],
    );
    assert.equal(ran, false);
    assert.equal(await admission.run('acc_b', response(), async () => 'other tenant'), 'other tenant');
    const scraped = await metrics.registry.getSingleMetricAsString('treasury_pay_admission_waiting');
    assert.match(scraped, /^treasury_pay_admission_waiting 1$/m);
    first.finish();
    assert.deepEqual([await running, await waiting], ['paid', 'second']);
    const refusals = await metrics.registry.getSingleMetricAsString('treasury_pay_admission_refusals_total');
    assert.match(refusals, /reason="tenant_queue_full"} 1$/m);
  });

  it('past the queue over every tenant, or after the longest wait, 503 pay_overloaded', async () => {
    const admission = new PayAdmission(config, createTreasuryMetrics());
    const a = held();
    const b = held();
    const runningA = admission.run('acc_a', response(), a.run);
    const runningB = admission.run('acc_b', response(), b.run);
    const waitingA = admission.run('acc_a', response(), async () => 'a2');
    const waitingB = admission.run('acc_b', response(), async () => 'b2');
    const full = await refusal(admission.run('acc_c', response(), async () => 'c1'));
    assert.deepEqual([full.code, full.status, full.fields], ['pay_overloaded', 503, { reason: 'queue_full' }]);
    const late = await refusal(waitingA);
    assert.deepEqual(
      [late.code, late.fields, late.headers],
      ['pay_overloaded', { reason: 'waited_too_long' }, { 'Retry-After': '1' }],
    );
    await refusal(waitingB);
    a.finish();
    b.finish();
    assert.deepEqual([await runningA, await runningB], ['paid', 'paid']);
  });

  it('a waiting payment whose client went away is dropped unrun: request_abandoned', async () => {
    const admission = new PayAdmission({ ...config, inFlight: 1 }, createTreasuryMetrics());
    const first = held();
    const running = admission.run('acc_a', response(), first.run);
    const gone = response();
    let ran = false;
    const waiting = admission.run('acc_b', gone, async () => {
      ran = true;
    });
    (gone as unknown as EventEmitter).emit('close');
    const err = await refusal(waiting);
    assert.deepEqual([err.code, err.status], ['request_abandoned', 408]);
    first.finish();
    await running;
    assert.equal(ran, false);
    assert.equal((gone as unknown as EventEmitter).listenerCount('close'), 0, 'no listener left behind');
  });
});

/**
 * The middleware's ledger reporter against a programmable platform over real HTTP: rows reported in a burst
 * go out as few `/v1/ledger/batch` calls, every row arrives once, per-row refusals and retries are counted,
 * a platform without the batch route gets single-row reports, and the pending bound drops (and counts) the
 * excess instead of growing without limit.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { LedgerReporter, type LedgerRow } from '../../../src/x402/seller/ledger-reporter.js';
import { createX402MiddlewareMetrics } from '../../../src/x402/seller/middleware-metrics.js';
import { ledgerBatchBodySchema } from '../../../src/shared/ledger-report-schema.js';
import { FakeServer, type Recorded } from './x402-fakes.js';

const PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const silent = { debug() {}, info() {}, warn() {}, error() {} };

function row(): LedgerRow {
  return {
    tx_hash: `0x${randomBytes(32).toString('hex')}`,
    payer: PAYER,
    amount: '10000',
    network: 'eip155:84532',
    method: 'GET',
    route: '/paid',
  };
}

function reporter(platformUrl: string, extra: Partial<ConstructorParameters<typeof LedgerReporter>[0]> = {}) {
  const registry = new Registry();
  const r = new LedgerReporter({
    apiUrl: platformUrl,
    token: 'xx_pat_test',
    fetch: (input, init) => fetch(input, init),
    timeoutMs: 2000,
    retryDelaysMs: [20, 20],
    metrics: createX402MiddlewareMetrics(registry),
    logger: silent,
    ...extra,
  });
  return { r, registry };
}

async function outcomes(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('treasury_x402_middleware_ledger_reports_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

const createdAll = (c: Recorded) => ({
  body: { results: c.body.rows.map((r: { tx_hash: string }) => ({ tx_hash: r.tx_hash, outcome: 'created' })) },
});

describe('x402 middleware ledger reporter: batching', function () {
  let platform: FakeServer;
  afterEach(async () => platform?.stop());

  it('250 rows reported at once reach the platform in batches of at most 100, each row exactly once', async () => {
    platform = await new FakeServer().on('/v1/ledger/batch', createdAll).start();
    const { r, registry } = reporter(platform.url);
    const rows = Array.from({ length: 250 }, row);
    for (const x of rows) r.report(x);
    await r.flush();
    const calls = platform.callsTo('/v1/ledger/batch');
    assert.ok(calls.length >= 3 && calls.length <= 5, `expected 3–5 batch calls, got ${calls.length}`);
    for (const c of calls) assert.ok(c.body.rows.length <= 100);
    assert.equal(calls[0]!.headers.authorization, 'Bearer xx_pat_test');
    const received = calls.flatMap((c) => c.body.rows.map((x: { tx_hash: string }) => x.tx_hash)).sort();
    assert.deepEqual(received, rows.map((x) => x.tx_hash).sort());
    assert.equal(platform.callsTo('/v1/ledger').length, 0);
    assert.deepEqual(await outcomes(registry), { sent: 250 });
    assert.equal(r.pending, 0);
  });

  it('per-row outcomes are counted: created, duplicate and refused rows', async () => {
    platform = await new FakeServer()
      .on('/v1/ledger/batch', (c) => ({
        body: {
          results: c.body.rows.map((x: { tx_hash: string }, i: number) => ({
            tx_hash: x.tx_hash,
            ...(i === 0
              ? { outcome: 'rejected', error_code: 'endpoint_not_found' }
              : i === 1
                ? { outcome: 'duplicate' }
                : { outcome: 'created' }),
          })),
        },
      }))
      .start();
    const { r, registry } = reporter(platform.url);
    for (let i = 0; i < 5; i++) r.report(row());
    await r.flush();
    assert.deepEqual(await outcomes(registry), { rejected: 1, duplicate: 1, sent: 3 });
  });

  it('a 503 is retried and the rows are delivered once; a 400 is final', async () => {
    let failures = 1;
    platform = await new FakeServer()
      .on('/v1/ledger/batch', (c) => (failures-- > 0 ? { status: 503 } : createdAll(c)))
      .start();
    const { r, registry } = reporter(platform.url);
    for (let i = 0; i < 3; i++) r.report(row());
    await r.flush();
    assert.equal(platform.callsTo('/v1/ledger/batch').length, 2);
    assert.deepEqual(await outcomes(registry), { sent: 3 });

    platform.on('/v1/ledger/batch', { status: 400, body: { error_code: 'invalid_request' } });
    for (let i = 0; i < 2; i++) r.report(row());
    await r.flush();
    assert.equal(platform.callsTo('/v1/ledger/batch').length, 3, 'a 4xx is not retried');
    assert.deepEqual(await outcomes(registry), { sent: 3, rejected: 2 });
  });

  it('a malformed row costs only itself: the platform refuses its batch, the others are sent again without it', async () => {
    // The platform checks each batch with the API's own schema: one malformed row refuses the whole call.
    platform = await new FakeServer()
      .on('/v1/ledger/batch', (c) =>
        ledgerBatchBodySchema.safeParse(c.body).success
          ? createdAll(c)
          : { status: 400, body: { error_code: 'invalid_request' } },
      )
      .start();
    const { r, registry } = reporter(platform.url);
    const good = Array.from({ length: 3 }, row);
    for (const x of good.slice(0, 2)) r.report(x);
    r.report({ ...row(), tx_hash: '0x1234' });
    r.report({ ...row(), payer: '0x857b06519e91e3a54538791bdbb0e22373e36B66' }); // a wrong EIP-55 spelling
    r.report(good[2]!);
    await r.flush();
    const calls = platform.callsTo('/v1/ledger/batch');
    assert.equal(calls.length, 2, 'the refused batch and the one without its malformed rows');
    assert.deepEqual(
      calls[1]!.body.rows.map((x: { tx_hash: string }) => x.tx_hash),
      good.map((x) => x.tx_hash),
    );
    assert.deepEqual(await outcomes(registry), { invalid: 2, sent: 3 });
    assert.equal(r.pending, 0);
  });

  it('a platform without the batch route (404) gets single-row reports, and is not asked for batches again', async () => {
    platform = await new FakeServer().on('/v1/ledger', { status: 201, body: { id: 'led_1' } }).start();
    const { r, registry } = reporter(platform.url);
    for (let i = 0; i < 4; i++) r.report(row());
    await r.flush();
    r.report(row());
    await r.flush();
    assert.equal(platform.callsTo('/v1/ledger/batch').length, 1);
    assert.equal(platform.callsTo('/v1/ledger').length, 5);
    assert.deepEqual(await outcomes(registry), { sent: 5 });
  });

  it('rows beyond maxPending are dropped and counted while the platform is slow', async () => {
    platform = await new FakeServer().on('/v1/ledger/batch', (c) => ({ ...createdAll(c), delayMs: 300 })).start();
    const { r, registry } = reporter(platform.url, { maxPending: 10, batchSize: 5, maxInFlight: 1 });
    for (let i = 0; i < 25; i++) r.report(row());
    assert.equal(r.pending, 10);
    await r.flush();
    assert.deepEqual(await outcomes(registry), { dropped: 15, sent: 10 });
  });
});

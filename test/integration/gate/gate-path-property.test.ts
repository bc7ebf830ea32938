/**
 * Property (fast-check, seeded and replayable): for any request target — mixes of `/`, `\`, `.`, `..`, percent
 * escapes (valid, invalid, encoded separators, double-encoded), unicode and its compatibility look-alikes, `;`,
 * controls, a query — sent raw to a real gate in front of a real loopback origin that records its request line,
 * either the gate refuses it (nothing reaches the origin), or the origin receives exactly the target the gate
 * accepted (prefix removed, a bare `?` dropped), a WHATWG parser reads that target as itself (so the origin
 * resolves no other path), and the buyer paid what the seller's catalogue prices for that path as the origin
 * reads it — a free answer only for a free route, a 404 only for a route nothing sells.
 *
 * Replay a failure with FC_SEED=<seed> (and FC_PATH=<path> from the report); FC_RUNS sets the number of runs.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import {
  catalogueEndpoint,
  GATE_SLUG,
  startOrigin,
  startTestGate,
  tableCatalogue,
  type TestGate,
  type TestOrigin,
} from './gate-fakes.js';
import { rawExchange } from './raw-http.js';

const BASE_DOMAIN = 'gate.test';

/** The seller's prices, as the test reads its own catalogue: micro-USD by path, undefined where nothing is sold. */
function cataloguePrice(received: string): bigint | undefined {
  const path = received.split('?')[0]!;
  // `/health` is no exception here: `/{page}` sells it (it passes unpaid only when nothing of its method does).
  const key = decodeURIComponent(path).toLowerCase().replace(/\/+$/, '');
  const segments = key === '' ? [] : key.slice(1).split('/');
  if (key === '/premium') return 2_500_000n;
  if (segments.length === 2 && segments[0] === 'public' && segments[1] !== '') return 0n;
  if (segments.length === 1 && segments[0] !== '') return 10_000n;
  if (segments.length === 3 && segments[0] === 'docs' && segments[1] !== '' && segments[2] !== '') return 50_000n;
  return undefined;
}

function catalogueFor(originUrl: string) {
  const pattern = (p: string, price: string) => ({ ...catalogueEndpoint(p, price), path_pattern: p });
  return tableCatalogue(originUrl, {
    endpoints: [
      catalogueEndpoint('/premium', '2.5'),
      pattern('/public/{file}', '0'),
      pattern('/{page}', '0.01'),
      pattern('/docs/{a}/{b}', '0.05'),
    ],
  });
}

/** Segments and characters a plain path is made of (valid escapes included). */
const PLAIN = [
  'a',
  'B',
  'x1',
  'public',
  'premium',
  'docs',
  'PREMIUM',
  'Public',
  '%41',
  '%7e',
  '%C3%A9',
  ';x',
  '~',
  "'",
];
const PLAIN_CHARS = ['(', '@', ':', '+', '=', '&', ',', '%3b', '-', '_'];
/** What an origin could resolve to another path, or a character outside a URL path. */
const HOSTILE = [
  ...['.', '..', '...', '%2e', '%2E', '%2e%2e', '.%2E', '%2f', '%2F', '%5c', '%5C', '\\', '..\\', '%25', '%252e'],
  ...['%', '%zz', '%4', '%c0%ae', '\uff0e', '\uff0e\uff0e', '\uff0f', '\u2024', '..;', ' ', '\t', '%00', '%0a'],
  ...['\u0001', 'é', '|', '{', '}', '"', '<', '>', '^', '`', '#', '[', ']', 'health'],
];
const SEPARATORS = ['//', '\\', '/./', '/../', '/%2e%2e/', '/%2F'];

const part = fc.oneof(
  { arbitrary: fc.constantFrom(...PLAIN), weight: 6 },
  { arbitrary: fc.constantFrom(...PLAIN_CHARS), weight: 2 },
  { arbitrary: fc.constant('/'), weight: 5 },
  { arbitrary: fc.constantFrom(...HOSTILE), weight: 2 },
  { arbitrary: fc.constantFrom(...SEPARATORS), weight: 1 },
);
const targetArb = fc.record({
  parts: fc.array(part, { maxLength: 7 }),
  query: fc.constantFrom('', '', '?', '?a=1', '?x=..%2f', '?q=\\', '?b=%zz', '?c=d?e'),
  byHost: fc.boolean(),
});

interface Case {
  path: string;
  query: string;
  byHost: boolean;
}

describe('gate: property — the origin receives exactly what was priced, or the gate refused', function () {
  this.timeout(300_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate;

  before(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: catalogueFor(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_BASE_DOMAIN: BASE_DOMAIN });
  });
  after(async () => {
    await gate.stop();
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  async function check(c: Case): Promise<void> {
    const target = c.byHost ? c.path + c.query : `/${GATE_SLUG}${c.path}${c.query}`;
    const headers: Record<string, string> = c.byHost ? { Host: `${GATE_SLUG}.${BASE_DOMAIN}` } : {};
    const before = origin.requests.length;
    const first = await rawExchange(gate.url, { target, headers });
    let paid = 0n;
    let answer = first;
    if (first.status === 402) {
      assert.equal(origin.requests.length, before, 'a 402 reached the origin');
      const accepted = (JSON.parse(first.body) as PaymentRequired).accepts[0]!;
      paid = BigInt(accepted.amount);
      const header = encodePaymentPayload(await signExactPayment(accepted));
      answer = await rawExchange(gate.url, { target, headers: { ...headers, 'PAYMENT-SIGNATURE': header } });
    }
    const reached = origin.requests.slice(before);
    if (answer.status === 400 || answer.status === 404) {
      assert.equal(reached.length, 0, `refused, yet the origin saw ${reached.map((r) => r.url).join(', ')}`);
      if (answer.status === 404) assert.equal(cataloguePrice(c.path || '/'), undefined, 'a sold route was 404');
      return;
    }
    assert.equal(answer.status, 200, `${answer.status} ${answer.body}`);
    assert.equal(reached.length, 1);
    const received = reached[0]!.url;
    const expected = (c.path || '/') + (c.query === '?' ? '' : c.query);
    assert.equal(received, expected, 'the origin received another target than the one priced');
    const whatwg = new URL(`http://origin.test${received}`);
    assert.equal(whatwg.pathname + whatwg.search, received, 'a WHATWG origin would resolve another path');
    assert.equal(paid, cataloguePrice(received), `paid ${paid} for ${received}`);
  }

  it('holds for generated hostile targets (prefix and host routing)', async () => {
    const seed = Number(process.env.FC_SEED ?? 20261128);
    await fc.assert(
      fc.asyncProperty(targetArb, ({ parts, query, byHost }) => check({ path: `/${parts.join('')}`, query, byHost })),
      {
        seed,
        numRuns: Number(process.env.FC_RUNS ?? 300),
        ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
      },
    );
  });

  it('holds for the known bypasses (examples kept as regression cases)', async () => {
    for (const path of ['/public/..\\premium', '/public/%2e%2e/premium', '/x/..%2fpremium', '/public/..;/premium'])
      for (const byHost of [false, true]) await check({ path, query: '', byHost });
  });
});

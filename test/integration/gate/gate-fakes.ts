/**
 * Test doubles for the gate suites: an origin with no payment code at all (every path answers PAID_BODY in some
 * form, as the Koa test seller's handler does; it records each request's headers), the catalogue a fake
 * platform serves for it, and an in-process gate (src/gate/gate-app.ts) in front of them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createGateApp, type GateApp } from '../../../src/gate/gate-app.js';
import { loadGateConfig } from '../../../src/gate/gate-config.js';
import type { GateCatalogue } from '../../../src/shared/api-responses/gate-responses.js';
import { PAID_BODY, type FakeServer } from '../x402-middleware/x402-fakes.js';

export const GATE_TOKEN = 'xx_pat_gategategategategategategategategate1234';
export const GATE_SLUG = 'weather';
export const GATE_SELLER_ID = 'sel_000000000000000000000001';
export const GATE_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

export interface TestOrigin {
  url: string;
  runs: number;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  stop(): Promise<void>;
}

/** The origin: answers like the Koa test seller's handler, with no payment code. */
export async function startOrigin(): Promise<TestOrigin> {
  const state: TestOrigin = { url: '', runs: 0, requests: [], stop: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.runs++;
      const url = req.url ?? '/';
      const path = url.split('?')[0]!;
      state.requests.push({
        method: req.method ?? '',
        url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      switch (path) {
        case '/health':
          res.end('ok');
          return;
        case '/stream':
          res.writeHead(200, { 'content-type': 'text/plain' });
          Readable.from([PAID_BODY.slice(0, 10), PAID_BODY.slice(10)]).pipe(res);
          return;
        case '/big-stream': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const parts = Array.from({ length: 64 }, (_, i) => `${PAID_BODY}-${String(i).padStart(4, '0')}\n`);
          Readable.from(parts).pipe(res);
          return;
        }
        case '/huge': {
          // 4 MiB in 64 KiB chunks, each its index repeated: written as the buyer reads (back-pressure).
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(HUGE_BYTES) });
          const chunks = function* () {
            for (let i = 0; i < HUGE_BYTES / 65_536; i++) yield Buffer.alloc(65_536, i);
          };
          Readable.from(chunks()).pipe(res);
          return;
        }
        case '/cut':
        case '/stall':
          // Headers and a part of the body, then the connection dies (`/cut`) or nothing more comes (`/stall`).
          res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
          res.write(PAID_BODY.slice(0, 10), () => {
            if (path === '/cut') setTimeout(() => req.socket.destroy(), 20).unref();
          });
          return;
        case '/hints':
          // An informational 103 first (Early Hints), then the answer.
          res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' }, () => {
            res.writeHead(200, { 'content-type': 'text/plain' });
            res.end(PAID_BODY);
          });
          return;
        case '/fail':
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(`HANDLER-ERROR ${PAID_BODY}`);
          return;
        case '/throws':
          req.socket.destroy();
          return;
        case '/late':
          setTimeout(() => res.end(PAID_BODY), 400).unref();
          return;
        case '/slow':
          setTimeout(() => res.end(PAID_BODY), 5_000).unref();
          return;
        case '/echo':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ data: PAID_BODY, body: Buffer.concat(chunks).toString() }));
          return;
        case '/forge':
          res.writeHead(200, {
            'content-type': 'text/plain',
            'payment-response': 'forged',
            'x-payment-response': 'forged',
          });
          res.end(PAID_BODY);
          return;
        case '/metered':
        case '/overcharge':
          // An upto origin names its charge as a middleware handler does (Settlement-Overrides).
          res.writeHead(200, {
            'content-type': 'text/plain',
            'settlement-overrides': JSON.stringify({ amount: path === '/metered' ? '40%' : '200%' }),
          });
          res.end(PAID_BODY);
          return;
        case '/metered-twice':
          // Two charges named on two header lines: which one is meant is not the gate's to guess.
          res.writeHead(200, {
            'content-type': 'text/plain',
            'settlement-overrides': [JSON.stringify({ amount: '10%' }), JSON.stringify({ amount: '40%' })],
          });
          res.end(PAID_BODY);
          return;
        case '/text':
          res.writeHead(200, { 'content-type': 'text/plain', 'x-handler-secret': 'leak' });
          res.end(PAID_BODY);
          return;
        default:
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'x-handler-secret': 'leak' });
          res.end(JSON.stringify({ data: PAID_BODY, path }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.stop = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}

let endpointCounter = 0;
const endpointId = () => `ep_${(++endpointCounter).toString(16).padStart(24, '0')}`;

/** One endpoint of the catalogue: GET `path` at `price` (route_prices optional). */
export function catalogueEndpoint(path: string, price: string, routePrices: Record<string, string> = {}) {
  return {
    endpoint_id: endpointId(),
    slug: path.slice(1) || 'root',
    method: 'GET',
    path,
    path_pattern: null,
    price,
    route_prices: routePrices,
    priced: true,
  };
}

/** The length of the origin's `/huge` answer (an unpriced route of the table's seller). */
export const HUGE_BYTES = 4 * 1024 * 1024;

/** The table's seller: /paid 0.01, /premium 2.5, /free, /huge and /also-free nothing, /fail and the others 0.01. */
export function tableCatalogue(
  originUrl: string,
  overrides: Partial<GateCatalogue['sellers'][number]> = {},
): GateCatalogue {
  return {
    account_id: 'acct_000000000000000000000001',
    sellers: [
      {
        seller_id: GATE_SELLER_ID,
        slug: GATE_SLUG,
        status: 'active',
        origin: originUrl,
        origin_verified: true,
        pay_to: GATE_PAY_TO,
        endpoints: [
          catalogueEndpoint('/paid', '0.01'),
          catalogueEndpoint('/premium', '2.5'),
          catalogueEndpoint('/free', '0'),
          catalogueEndpoint('/huge', '0'),
          catalogueEndpoint('/also-free', '0.01', { '/also-free': '' }),
          ...[
            '/fail',
            '/throws',
            '/late',
            '/slow',
            '/metered',
            '/overcharge',
            '/metered-twice',
            '/echo',
            '/forge',
            '/text',
            '/stream',
            '/big-stream',
            '/hints',
            '/cut',
            '/stall',
          ].map((p) => catalogueEndpoint(p, '0.01')),
        ],
        ...overrides,
      },
    ],
  };
}

export interface TestGate {
  url: string;
  app: GateApp;
  stop(): Promise<void>;
}

/** A gate on `platform` (which must serve the catalogue) with the given environment on top of the test defaults. */
export async function startTestGate(
  platform: Pick<FakeServer, 'url'>,
  env: Record<string, string | undefined> = {},
): Promise<TestGate> {
  const config = loadGateConfig({
    GATE_TOKEN,
    GATE_API_URL: platform.url,
    GATE_PORT: '0',
    GATE_VERIFY_TIMEOUT_MS: '500',
    GATE_SETTLE_TIMEOUT_MS: '500',
    GATE_PLATFORM_TIMEOUT_MS: '500',
    GATE_ORIGIN_TIMEOUT_MS: '1000',
    GATE_MAX_HELD_BYTES: '256',
    // The test origins are on loopback: the operator's switch, set explicitly (gate-origin.test.ts runs without it).
    GATE_ALLOW_PRIVATE_ORIGINS: '1',
    ...env,
  });
  const app = createGateApp(config, { ledgerRetryDelaysMs: [20, 20] });
  const url = await app.listen();
  await app.catalogue.refreshNow();
  return {
    url,
    app,
    stop: async () => {
      await app.close();
    },
  };
}

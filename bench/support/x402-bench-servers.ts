/**
 * Child processes of `bench/x402-middleware-bench.ts`, one role per process (argv[2]):
 *   - `express`  — express 5 + `paymentMiddleware` from `@x402/express` over `x402ResourceServer` with the
 *                  exact EVM server scheme, facilitator an in-process object (no socket);
 *   - `koa`      — Koa 3 + our `x402Koa`, facilitator the same in-process object; platform calls
 *                  (`/v1/auth/verify`, `/v1/ledger/batch`) go to the stub platform over HTTP through the
 *                  middleware's own transport (no `fetch` given: src/x402/pooled-request.ts), or are answered
 *                  in-process by an injected `fetch` when BENCH_PLATFORM=inproc;
 *   - `platform` — stub of the Treasury platform: `/v1/auth/verify` → one endpoint, `/v1/ledger` → 201, and the
 *                  gate's `/v1/gate/ledger/batch` and `/v1/gate/catalogue` (the catalogue the gate child posted
 *                  to `/bench/catalogue` first);
 *   - `facilitator` — with BENCH_FACILITATOR=http, a stub facilitator every payment server asks over HTTP instead
 *                  of its in-process object (`/verify`, `/settle`, `/supported` answered at once): @x402/express
 *                  through @x402/core's `HTTPFacilitatorClient` (global `fetch`), x402Koa through `facilitator_url`
 *                  and its own transport, the gate through FACILITATOR_URL;
 *   - `origin`   — a plain node:http server with no payment code, `GET /paid` and `GET /free` answering the body;
 *   - `gate`     — treasury-gate (src/gate/gate-app.ts) in front of the origin (BENCH_ORIGIN_URL), seller `bench`
 *                  routed by path prefix (`/bench/paid`), the same in-process facilitator object; its catalogue
 *                  and ledger reports come from and go to the stub platform, through the gate's own transport.
 * Each listens on an ephemeral loopback port and reports it over IPC (`{type:'ready', port}`); on
 * `{type:'stats'}` it answers with its CPU time, RSS and (platform) the counts of ledger reports received and
 * of TCP connections accepted.
 *
 * Both payment servers serve `GET /paid` (price 10000 atomic USDC = $0.01 on eip155:84532, same payTo) and
 * `GET /free` (not priced; goes through the middleware) with the same small JSON body. Express's ETag and
 * X-Powered-By are switched off because Koa sends neither; nothing else is tuned.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fullCollection } from './full-collection.js';

/**
 * Where our code is loaded from: `dist` (the compiled JavaScript of `npm run build`, what the images and the
 * published x402-koa package run) or `sources` (the TypeScript through tsx, whose esbuild transform wraps every
 * function created at run time in a `__name` property definition: about 0.8 µs per closure on Node 20, a cost
 * compiled code does not pay). The parent (x402-middleware-bench.ts) chooses and passes BENCH_CODE.
 */
const CODE = process.env.BENCH_CODE === 'dist' ? '../../dist/src' : '../../src';
const ourCode = <T>(modulePath: string): Promise<T> => import(`${CODE}/${modulePath}`) as Promise<T>;

export const BENCH_NETWORK = 'eip155:84532';
export const BENCH_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
export const BENCH_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const BENCH_ENDPOINT_ID = 'ep_0123456789abcdef01234567';
/** A fixed, well-formed 32-byte transaction hash the stub facilitator reports for every settlement. */
export const BENCH_TX_HASH = `0x${'ab'.repeat(32)}`;
const BODY = { data: 'paid content', n: 42 };
const SUPPORTED = { kinds: [{ x402Version: 2, scheme: 'exact', network: BENCH_NETWORK }], extensions: [], signers: {} };

/** What a child answers `{type:'stats'}` with (besides the `type`). */
export interface ServerStats {
  cpuUserUs: number;
  cpuSystemUs: number;
  rss: number;
  /** The heap's live bytes after a full collection, when the question asked for one (`collect`). */
  liveHeap?: number;
  ledgerReports?: number;
  ledgerCalls?: number;
  authVerifies?: number;
  connections?: number;
  /** x402Koa's own counters: requests by outcome, ledger reports by outcome. */
  outcomes?: Record<string, number>;
  ledgerOutcomes?: Record<string, number>;
}
type Stats = ServerStats & { type: 'stats' };

function serve(server: http.Server, extraStats: () => Partial<Stats> | Promise<Partial<Stats>> = () => ({})): void {
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send!({ type: 'ready', port: (server.address() as AddressInfo).port });
  });
  process.on('message', async (msg: { type?: string; collect?: boolean }) => {
    if (msg?.type === 'stats') {
      const cpu = process.cpuUsage();
      const rss = process.memoryUsage().rss;
      process.send!({
        type: 'stats',
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        rss,
        // What the process still holds after a full collection (a growing RSS alone does not tell it apart from V8
        // sizing its heap); asked for at a run's start and end only, so that no slice is measured across it.
        ...(msg.collect ? { liveHeap: fullCollection() } : {}),
        ...(await extraStats()),
      } satisfies Stats);
    }
  });
  process.on('disconnect', () => process.exit(0));
}

/** The payer is read from the header's authorization by the load generator and passed in once (one buyer key). */
/**
 * BENCH_OUR_FETCH=global: x402Koa and the gate are given the global `fetch` for their calls over HTTP, as they used
 * before their own transport (src/x402/pooled-request.ts) — to measure what that transport saves.
 */
const globalFetch =
  process.env.BENCH_OUR_FETCH === 'global' ? (input: string, init: RequestInit) => fetch(input, init) : undefined;

function payerFromEnv(): string {
  const payer = process.env.BENCH_PAYER;
  if (!payer || !/^0x[0-9a-fA-F]{40}$/.test(payer)) throw new Error('BENCH_PAYER must be the buyer address');
  return payer;
}

async function startExpress(): Promise<void> {
  const { default: express } = await import('express');
  const { paymentMiddleware } = await import('@x402/express');
  const { HTTPFacilitatorClient, x402ResourceServer } = await import('@x402/core/server');
  const { ExactEvmScheme } = await import('@x402/evm/exact/server');
  const payer = payerFromEnv();
  // Any object with verify/settle/getSupported is a FacilitatorClient; this one answers at once.
  const facilitator = {
    verify: async () => ({ isValid: true, payer }),
    settle: async () => ({ success: true, transaction: BENCH_TX_HASH, network: BENCH_NETWORK, payer }),
    getSupported: async () => SUPPORTED,
  };
  const facilitatorUrl = process.env.BENCH_FACILITATOR_URL;
  const client = facilitatorUrl ? new HTTPFacilitatorClient({ url: facilitatorUrl }) : facilitator;
  const resourceServer = new x402ResourceServer(client as never).register(BENCH_NETWORK, new ExactEvmScheme());
  const app = express();
  app.set('etag', false);
  app.set('x-powered-by', false);
  app.use(
    paymentMiddleware(
      {
        'GET /paid': {
          accepts: {
            scheme: 'exact',
            network: BENCH_NETWORK,
            payTo: BENCH_PAY_TO,
            price: { asset: BENCH_USDC, amount: '10000', extra: { name: 'USDC', version: '2' } },
          },
          description: 'bench',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get('/paid', (_req, res) => void res.json(BODY));
  app.get('/free', (_req, res) => void res.json(BODY));
  serve(http.createServer(app));
}

async function startKoa(): Promise<void> {
  const { default: Koa } = await import('koa');
  const { x402Koa } = await ourCode<typeof import('../../src/x402/koa/index.js')>('x402/koa/index.js');
  const { Registry } = await import('prom-client');
  const registry = new Registry();
  const payer = payerFromEnv();
  const platformUrl = process.env.BENCH_PLATFORM_URL;
  const inprocPlatform = process.env.BENCH_PLATFORM === 'inproc';
  if (!platformUrl) throw new Error('BENCH_PLATFORM_URL is required');
  const json = { 'content-type': 'application/json' };
  // The same in-process facilitator object the @x402/express server gets: it answers at once, no socket.
  const facilitator = {
    verify: async () => ({ isValid: true, payer }),
    settle: async () => ({ success: true, transaction: BENCH_TX_HASH, network: BENCH_NETWORK, payer }),
    getSupported: async () => SUPPORTED,
  };
  const authReply = JSON.stringify({
    seller_id: 'sel_bench',
    slug: 'bench',
    status: 'active',
    endpoints: [{ endpoint_id: BENCH_ENDPOINT_ID, slug: 'paid', path: '/paid', method: 'GET' }],
  });
  const batchReply = (init: RequestInit) => {
    const rows = (JSON.parse(String(init.body)) as { rows: Array<{ tx_hash: string }> }).rows;
    return JSON.stringify({ results: rows.map((r) => ({ tx_hash: r.tx_hash, outcome: 'created' })) });
  };
  // With BENCH_PLATFORM=inproc the platform calls are answered here too, without a socket.
  const benchFetch = async (input: string, init: RequestInit): Promise<Response> => {
    if (inprocPlatform && input.startsWith(platformUrl)) {
      const path = input.slice(platformUrl.length);
      if (path === '/v1/auth/verify') return new Response(authReply, { status: 200, headers: json });
      if (path === '/v1/ledger/batch') return new Response(batchReply(init), { status: 200, headers: json });
      if (path === '/v1/ledger') return new Response('{}', { status: 201, headers: json });
    }
    return fetch(input, init);
  };
  const app = new Koa();
  app.use(
    x402Koa({
      token: 'xx_pat_benchbenchbenchbench0001',
      price: '0.01',
      pay_to: BENCH_PAY_TO,
      ...(process.env.BENCH_FACILITATOR_URL ? { facilitator_url: process.env.BENCH_FACILITATOR_URL } : { facilitator }),
      api_url: platformUrl,
      network: BENCH_NETWORK,
      description: 'bench',
      mime_type: 'application/json',
      route_prices: { '/free': '0' },
      // Over HTTP, the middleware's own transport (what a seller runs); in-process, the stub answers.
      ...(inprocPlatform ? { fetch: benchFetch } : globalFetch ? { fetch: globalFetch } : {}),
      registry,
      env: {},
    }),
  );
  app.use((ctx) => {
    if (ctx.method === 'GET' && (ctx.path === '/paid' || ctx.path === '/free')) ctx.body = BODY;
  });
  const byLabel = async (name: string, label: string) => {
    const metric = registry.getSingleMetric(name);
    const out: Record<string, number> = {};
    for (const v of metric ? (await metric.get()).values : []) out[String(v.labels[label])] = v.value;
    return out;
  };
  serve(http.createServer(app.callback()), async () => ({
    outcomes: await byLabel('treasury_x402_middleware_requests_total', 'outcome'),
    ledgerOutcomes: await byLabel('treasury_x402_middleware_ledger_reports_total', 'outcome'),
  }));
}

async function startOrigin(): Promise<void> {
  const body = JSON.stringify(BODY);
  serve(
    http.createServer((req, res) => {
      if (req.method === 'GET' && (req.url === '/paid' || req.url === '/free'))
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
      else res.writeHead(404).end();
    }),
  );
}

async function startGate(): Promise<void> {
  const { createGateApp } = await ourCode<typeof import('../../src/gate/gate-app.js')>('gate/gate-app.js');
  const { loadGateConfig } = await ourCode<typeof import('../../src/gate/gate-config.js')>('gate/gate-config.js');
  const payer = payerFromEnv();
  const platformUrl = process.env.BENCH_PLATFORM_URL;
  const originUrl = process.env.BENCH_ORIGIN_URL;
  if (!platformUrl || !originUrl) throw new Error('BENCH_PLATFORM_URL and BENCH_ORIGIN_URL are required');
  const facilitator = {
    verify: async () => ({ isValid: true, payer }),
    settle: async () => ({ success: true, transaction: BENCH_TX_HASH, network: BENCH_NETWORK, payer }),
    getSupported: async () => SUPPORTED,
  };
  const endpoint = (id: string, path: string, price: string) => ({
    endpoint_id: id,
    slug: path.slice(1),
    method: 'GET',
    path,
    path_pattern: null,
    price,
    route_prices: {},
    priced: true,
  });
  const catalogue = JSON.stringify({
    account_id: 'acct_bench',
    sellers: [
      {
        seller_id: 'sel_000000000000000000000bec',
        slug: 'bench',
        status: 'active',
        origin: originUrl,
        origin_verified: true,
        pay_to: BENCH_PAY_TO,
        endpoints: [
          endpoint(BENCH_ENDPOINT_ID, '/paid', '0.01'),
          endpoint('ep_0123456789abcdef01234568', '/free', '0'),
        ],
      },
    ],
  });
  // The stub platform serves this catalogue from now on; the gate reads it through its own transport.
  const posted = await fetch(`${platformUrl}/bench/catalogue`, { method: 'POST', body: catalogue });
  if (posted.status !== 204) throw new Error(`the stub platform refused the catalogue: HTTP ${posted.status}`);
  const config = loadGateConfig({
    GATE_TOKEN: 'xx_pat_benchbenchbenchbench0002',
    GATE_API_URL: platformUrl,
    GATE_PORT: '0',
    GATE_NETWORK: BENCH_NETWORK,
    GATE_ALLOW_PRIVATE_ORIGINS: '1', // the bench origin is on loopback
    ...(process.env.BENCH_FACILITATOR_URL ? { FACILITATOR_URL: process.env.BENCH_FACILITATOR_URL } : {}),
  });
  const gate = createGateApp(config, {
    ...(process.env.BENCH_FACILITATOR_URL ? {} : { facilitator }),
    ...(globalFetch ? { fetch: globalFetch } : {}),
  });
  const url = await gate.listen();
  await gate.catalogue.refreshNow();
  const port = Number(new URL(url).port);
  const byLabel = async (name: string, label: string) => {
    const metric = gate.metrics.registry.getSingleMetric(name);
    const out: Record<string, number> = {};
    for (const v of metric ? (await metric.get()).values : []) out[String(v.labels[label])] = v.value;
    return out;
  };
  process.send!({ type: 'ready', port });
  process.on('message', async (msg: { type?: string; collect?: boolean }) => {
    if (msg?.type !== 'stats') return;
    const cpu = process.cpuUsage();
    process.send!({
      type: 'stats',
      cpuUserUs: cpu.user,
      cpuSystemUs: cpu.system,
      rss: process.memoryUsage().rss,
      ...(msg.collect ? { liveHeap: fullCollection() } : {}),
      outcomes: await byLabel('treasury_x402_middleware_requests_total', 'outcome'),
      ledgerOutcomes: await byLabel('treasury_x402_middleware_ledger_reports_total', 'outcome'),
    } satisfies Stats);
  });
  process.on('disconnect', () => process.exit(0));
}

function startPlatform(): void {
  let ledgerReports = 0;
  let ledgerCalls = 0;
  let authVerifies = 0;
  let connections = 0;
  let catalogue = '';
  const authReply = JSON.stringify({
    seller_id: 'sel_bench',
    slug: 'bench',
    status: 'active',
    endpoints: [{ endpoint_id: BENCH_ENDPOINT_ID, slug: 'paid', path: '/paid', method: 'GET' }],
  });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.once('end', () => {
      if (req.method === 'POST' && (req.url === '/v1/ledger/batch' || req.url === '/v1/gate/ledger/batch')) {
        const rows = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { rows: Array<{ tx_hash: string }> }).rows;
        ledgerReports += rows.length;
        ledgerCalls++;
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ results: rows.map((r) => ({ tx_hash: r.tx_hash, outcome: 'created' })) }));
      } else if (req.method === 'POST' && req.url === '/bench/catalogue') {
        catalogue = Buffer.concat(chunks).toString('utf8');
        res.writeHead(204).end();
      } else if (req.method === 'GET' && req.url?.split('?')[0] === '/v1/gate/catalogue' && catalogue !== '') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(catalogue);
      } else if (req.method === 'POST' && req.url === '/v1/auth/verify') {
        authVerifies++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(authReply);
      } else if (req.method === 'POST' && req.url === '/v1/ledger') {
        ledgerReports++;
        ledgerCalls++;
        res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  server.on('connection', () => connections++);
  serve(server, () => ({ ledgerReports, ledgerCalls, authVerifies, connections }));
}

function startFacilitator(): void {
  const send = (res: http.ServerResponse, body: unknown) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  serve(
    http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.once('end', () => {
        if (req.method === 'GET' && req.url === '/supported') return send(res, SUPPORTED);
        if (req.method !== 'POST') return res.writeHead(404).end();
        // The payer as the payment names it: one buyer, but read, as a facilitator would.
        const payer = (
          JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            paymentPayload?: { payload?: { authorization?: { from?: string } } };
          }
        ).paymentPayload?.payload?.authorization?.from;
        if (req.url === '/verify') return send(res, { isValid: true, payer });
        if (req.url === '/settle')
          return send(res, { success: true, transaction: BENCH_TX_HASH, network: BENCH_NETWORK, payer });
        res.writeHead(404).end();
      });
    }),
  );
}

const role = process.argv[2];
if (role === 'express') await startExpress();
else if (role === 'koa') await startKoa();
else if (role === 'platform') startPlatform();
else if (role === 'facilitator') startFacilitator();
else if (role === 'origin') await startOrigin();
else if (role === 'gate') await startGate();
else if (role !== undefined) throw new Error(`unknown role ${role}`);

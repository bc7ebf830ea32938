/**
 * In-process A/B of the seller's paid path between two checkouts of this repository: x402Koa (`koa`) or the
 * gate in front of a plain origin (`gate`), each checkout's code loaded side by side in one process, driven by
 * one keep-alive client in alternating slices of fresh payments; what is compared is the process's CPU per
 * paid request in each slice (client, facilitator stub and platform stub included, alike for both sides).
 *
 *   node --import tsx bench/x402-paid-ab.ts <checkout A> <checkout B> [koa|gate]
 *
 * Env: AB_SLICES (pairs of slices, default 8), AB_SLICE_REQUESTS (default 3,000), AB_CONCURRENCY (default 32),
 * AB_CODE (`sources`, the default: each checkout's TypeScript through tsx; `dist`: each checkout's compiled build,
 * `npm run build` in each first).
 * The facilitator stub approves every payment, so the authorizations are not signed (random nonces and
 * signature bytes); each is used once per side. Loopback only. Not a test: it prints figures and exits 0.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { driveEach } from './support/drive-each.js';

const NETWORK = 'eip155:84532';
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const PAYER = '0x1111111111111111111111111111111111111111';
const TX = `0x${'ab'.repeat(32)}`;
const BODY = { data: 'paid content', n: 42 };
const SLICES = Number(process.env.AB_SLICES ?? 8);
const PER_SLICE = Number(process.env.AB_SLICE_REQUESTS ?? 3000);
const CONCURRENCY = Number(process.env.AB_CONCURRENCY ?? 32);
const PLATFORM = 'http://127.0.0.1:9';
const json = { 'content-type': 'application/json' };
/** A module of a checkout: its TypeScript source, or its compiled build (AB_CODE=dist). */
const ourModule = (root: string, modulePath: string) =>
  import(
    process.env.AB_CODE === 'dist'
      ? path.resolve(root, 'dist/src', `${modulePath}.js`)
      : path.resolve(root, 'src', `${modulePath}.ts`)
  );

const facilitator = {
  verify: async () => ({ isValid: true, payer: PAYER }),
  settle: async () => ({ success: true, transaction: TX, network: NETWORK, payer: PAYER }),
  getSupported: async () => ({ kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }] }),
};

/** The platform, answered in-process: seller verify, ledger batches, the gate's catalogue. */
function platformFetch(originUrl: string) {
  const catalogue = JSON.stringify({
    account_id: 'acct_bench',
    sellers: [
      {
        seller_id: 'sel_000000000000000000000bec',
        slug: 'bench',
        status: 'active',
        origin: originUrl,
        origin_verified: true,
        pay_to: PAY_TO,
        endpoints: [
          {
            endpoint_id: 'ep_0123456789abcdef01234567',
            slug: 'paid',
            method: 'GET',
            path: '/paid',
            path_pattern: null,
            price: '0.01',
            route_prices: {},
            priced: true,
          },
        ],
      },
    ],
  });
  const auth = JSON.stringify({
    seller_id: 'sel_bench',
    slug: 'bench',
    status: 'active',
    endpoints: [{ endpoint_id: 'ep_0123456789abcdef01234567', slug: 'paid', path: '/paid', method: 'GET' }],
  });
  return async (input: string, init: RequestInit): Promise<Response> => {
    const p = input.slice(PLATFORM.length).split('?')[0];
    if (p === '/v1/gate/catalogue') return new Response(catalogue, { status: 200, headers: json });
    if (p === '/v1/auth/verify') return new Response(auth, { status: 200, headers: json });
    if (p === '/v1/ledger/batch' || p === '/v1/gate/ledger/batch') {
      const rows = (JSON.parse(String(init.body)) as { rows: Array<{ tx_hash: string }> }).rows;
      const results = rows.map((r) => ({ tx_hash: r.tx_hash, outcome: 'created' }));
      return new Response(JSON.stringify({ results }), { status: 200, headers: json });
    }
    return new Response('{}', { status: 404, headers: json });
  };
}

const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

async function startKoa(root: string): Promise<{ port: number; path: string }> {
  const { default: Koa } = await import('koa');
  const { x402Koa } = await ourModule(root, 'x402/koa/index');
  const app = new Koa();
  app.use(
    x402Koa({
      token: 'xx_pat_benchbenchbenchbench0001',
      price: '0.01',
      pay_to: PAY_TO,
      facilitator,
      api_url: PLATFORM,
      network: NETWORK,
      description: 'bench',
      mime_type: 'application/json',
      fetch: platformFetch(''),
      env: {},
    }),
  );
  app.use((ctx) => {
    if (ctx.path === '/paid') ctx.body = BODY;
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 60_000;
  return { port: await listen(server), path: '/paid' };
}

async function startGate(root: string, originUrl: string): Promise<{ port: number; path: string }> {
  const { createGateApp } = await ourModule(root, 'gate/gate-app');
  const { loadGateConfig } = await ourModule(root, 'gate/gate-config');
  const config = loadGateConfig({
    GATE_TOKEN: 'xx_pat_benchbenchbenchbench0002',
    GATE_API_URL: PLATFORM,
    GATE_PORT: '0',
    GATE_NETWORK: NETWORK,
    GATE_ALLOW_PRIVATE_ORIGINS: '1',
  });
  const gate = createGateApp(config, { facilitator, fetch: platformFetch(originUrl) });
  const url: string = await gate.listen();
  await gate.catalogue.refreshNow();
  return { port: Number(new URL(url).port), path: '/bench/paid' };
}

async function startOrigin(): Promise<string> {
  const body = JSON.stringify(BODY);
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body),
  );
  server.keepAliveTimeout = 60_000;
  return `http://127.0.0.1:${await listen(server)}`;
}

function get(agent: http.Agent, port: number, urlPath: string, headers: http.OutgoingHttpHeaders) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, agent, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.once('error', reject);
    req.end();
  });
}

/** One fresh `PAYMENT-SIGNATURE` for the requirement the server advertised. */
function payment(accepted: unknown, resource: unknown): string {
  const authorization = {
    from: PAYER,
    to: PAY_TO,
    value: '10000',
    validAfter: '0',
    validBefore: String(Math.floor(Date.now() / 1000) + 3600),
    nonce: `0x${randomBytes(32).toString('hex')}`,
  };
  const signature = `0x${randomBytes(65).toString('hex')}`;
  const payload = { x402Version: 2, resource, accepted, payload: { signature, authorization } };
  return Buffer.from(JSON.stringify(payload)).toString('base64');
}

interface Side {
  name: string;
  port: number;
  path: string;
  agent: http.Agent;
  accepted: unknown;
  resource: unknown;
  cpu: number[];
  /** Requests that got no answer at all (a keep-alive socket the server closed meanwhile, say). */
  errors: string[];
}

async function slice(side: Side): Promise<void> {
  const headers = Array.from({ length: PER_SLICE }, () => payment(side.accepted, side.resource));
  const t0 = process.cpuUsage();
  const run = await driveEach(CONCURRENCY, headers, async (h) => {
    const r = await get(side.agent, side.port, side.path, { 'payment-signature': h }).catch((err: Error) => {
      side.errors.push(err.message);
      return undefined;
    });
    // No answer at all is counted in side.errors, not as a failed payment.
    return !r || (r.status === 200 && !!r.headers['payment-response']);
  });
  const d = process.cpuUsage(t0);
  if (run.errors) throw new Error(`${side.name}: ${run.errors} paid requests failed`);
  side.cpu.push((d.user + d.system) / PER_SLICE);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const [rootA, rootB, kind = 'koa'] = process.argv.slice(2);
  if (!rootA || !rootB) throw new Error('usage: x402-paid-ab.ts <checkout A> <checkout B> [koa|gate]');
  const origin = kind === 'gate' ? await startOrigin() : '';
  const sides: Side[] = [];
  for (const [name, root] of [
    ['A', rootA],
    ['B', rootB],
  ] as const) {
    const s = kind === 'gate' ? await startGate(root, origin) : await startKoa(root);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const challenge = await get(agent, s.port, s.path, {});
    const c = JSON.parse(Buffer.from(String(challenge.headers['payment-required']), 'base64').toString()) as {
      accepts: unknown[];
      resource: unknown;
    };
    sides.push({ name, ...s, agent, accepted: c.accepts[0], resource: c.resource, cpu: [], errors: [] });
  }
  for (const side of sides) await slice(side); // warm-up, not counted
  for (const side of sides) side.cpu.length = 0;
  // Strictly alternated (A B A B …): every slice follows one of the other side, so neither inherits a warm cache
  // or the other's pending collections more often (a reversed order every other pair runs each side twice in a
  // row, and the second of those runs warm).
  for (let i = 0; i < SLICES; i++) for (const side of sides) await slice(side);
  const [a, b] = sides as [Side, Side];
  const ratios = a.cpu.map((x, i) => b.cpu[i]! / x);
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(' ');
  console.log(`${kind}: CPU µs per paid request (process), ${SLICES} slices of ${PER_SLICE} each`);
  console.log(`A ${rootA}: median ${median(a.cpu).toFixed(1)}  [${fmt(a.cpu)}]`);
  console.log(`B ${rootB}: median ${median(b.cpu).toFixed(1)}  [${fmt(b.cpu)}]`);
  for (const side of sides)
    if (side.errors.length)
      console.log(`${side.name}: ${side.errors.length} requests unanswered, first: ${side.errors[0]}`);
  const geometric = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
  console.log(
    `B ÷ A per pair: median ${median(ratios).toFixed(3)}, geometric mean ${geometric.toFixed(3)}  [${ratios.map((r) => r.toFixed(2)).join(' ')}]`,
  );
  process.exit(0);
}

await main();

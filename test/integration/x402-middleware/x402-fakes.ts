/**
 * Test doubles for the seller-middleware tests: a programmable facilitator (verify/settle replies, delays,
 * replies that wait for the test, 5xx, dropped connections), a fake platform (/v1/auth/verify, /v1/ledger), a
 * closed port for "connection refused", and a Koa seller app with handlers of every body kind. The real
 * facilitator, chain and platform are exercised by the end-to-end suites.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { lateBound } from '../../support/late-bound.js';
import { x402Koa, type X402KoaMiddleware, type X402KoaOptions } from '../../../src/x402/koa/index.js';

export type FakeReply = { status?: number; body?: unknown; delayMs?: number; raw?: string } | 'drop';

export interface Recorded {
  path: string;
  body: any;
  headers: http.IncomingHttpHeaders;
  /** The query string, without its `?` ('' when none). */
  query: string;
  at: number;
  /** When the fake's reply was sent (unset while it waits out a `delayMs`, and for a dropped connection). */
  answeredAt?: number;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readJson(req: http.IncomingMessage): Promise<any> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        resolve(text ? JSON.parse(text) : undefined);
      } catch {
        resolve(text);
      }
    });
  });
}

/** A reply, or a function of the call giving one (or a promise of one: the reply waits for it). */
type FakeReplier = (call: Recorded) => FakeReply | Promise<FakeReply>;

/** A small HTTP server whose reply per path is programmable; records every request. */
export class FakeServer {
  readonly calls: Recorded[] = [];
  private readonly replies = new Map<string, FakeReplier>();
  private server: http.Server | undefined;
  url = '';

  on(path: string, reply: FakeReply | FakeReplier): this {
    this.replies.set(path, typeof reply === 'function' ? reply : () => reply);
    return this;
  }

  callsTo(path: string): Recorded[] {
    return this.calls.filter((c) => c.path === path);
  }

  async start(): Promise<this> {
    this.server = http.createServer(async (req, res) => {
      // Routed and recorded by path; the query is kept apart (the gate names its network in the catalogue's).
      const [path = '', query = ''] = (req.url ?? '').split('?', 2);
      const call: Recorded = { path, query, body: await readJson(req), headers: req.headers, at: Date.now() };
      this.calls.push(call);
      const reply: FakeReply = await (
        this.replies.get(call.path) ?? ((): FakeReply => ({ status: 404, body: { error: 'no route' } }))
      )(call);
      if (reply === 'drop') {
        req.socket.destroy();
        return;
      }
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)));
      call.answeredAt = Date.now();
    });
    this.url = await listen(this.server);
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

export const TX_HASH = `0x${'5a'.repeat(32)}`;
export const ENDPOINT_A = 'ep_aaaaaaaaaaaaaaaaaaaaaaaa';
export const ENDPOINT_B = 'ep_bbbbbbbbbbbbbbbbbbbbbbbb';
export const SERVICE_PAT = 'xx_pat_testtesttesttesttesttesttesttesttesttest123';

export function endpointsReply(endpoints: Array<{ endpoint_id: string; slug: string }>) {
  return {
    status: 200,
    body: {
      seller_id: 'sel_000000000000000000000001',
      slug: 'weather',
      protocol: 'x402',
      payout_mode: 'direct',
      status: 'active',
      endpoints: endpoints.map((e) => ({
        ...e,
        seller_id: 'sel_000000000000000000000001',
        method: 'GET',
        path: '/paid',
        path_pattern: null,
        price: '0.01',
        route_prices: {},
        capabilities: [],
      })),
    },
  };
}

/** A facilitator that verifies and settles everything, and a platform with one endpoint. */
export async function startFakes() {
  const facilitator = await new FakeServer()
    .on('/verify', (c) => ({ body: { isValid: true, payer: c.body?.paymentPayload?.payload?.authorization?.from } }))
    .on('/settle', (c) => ({
      body: {
        success: true,
        transaction: TX_HASH,
        network: c.body?.paymentRequirements?.network,
        payer: c.body?.paymentPayload?.payload?.authorization?.from,
      },
    }))
    .start();
  const platform = await new FakeServer()
    .on('/v1/auth/verify', endpointsReply([{ endpoint_id: ENDPOINT_A, slug: 'forecast' }]))
    .on('/v1/ledger', { status: 201, body: { id: 'led_1' } })
    .start();
  return { facilitator, platform };
}

/** A URL on which nothing listens (connection refused). */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

export const PAID_BODY = 'SECRET-PAID-CONTENT-7f3a';

export interface SellerApp {
  url: string;
  middleware: X402KoaMiddleware;
  registry: Registry;
  handlerRuns: number;
  logs: Array<{ level: string; obj: object; msg: string | undefined }>;
  stop(): Promise<void>;
}

/** A Koa app behind the middleware; every route returns PAID_BODY in some form. */
export async function startSellerApp(options: Partial<X402KoaOptions> & { api_url: string }): Promise<SellerApp> {
  const registry = new Registry();
  const logs: SellerApp['logs'] = [];
  const log = (level: string) => (obj: object, msg?: string) => logs.push({ level, obj, msg });
  const middleware = x402Koa({
    token: SERVICE_PAT,
    price: '0.01',
    pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    registry,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    env: {},
    timeouts: { verify_ms: 500, settle_ms: 500, platform_ms: 500 },
    ledger_retry_delays_ms: [20, 20],
    ...options,
  });
  const app = new Koa();
  app.silent = true;
  const state = { handlerRuns: 0 };
  app.use(middleware);
  app.use(async (ctx) => {
    state.handlerRuns++;
    switch (ctx.path) {
      case '/health':
        ctx.body = 'ok';
        return;
      case '/stream':
        ctx.type = 'text/plain';
        ctx.body = Readable.from([PAID_BODY.slice(0, 10), PAID_BODY.slice(10)]);
        return;
      case '/big-stream': {
        ctx.type = 'text/plain';
        const parts = Array.from({ length: 64 }, (_, i) => `${PAID_BODY}-${String(i).padStart(4, '0')}\n`);
        ctx.body = Readable.from(parts);
        return;
      }
      case '/fail':
        ctx.status = 500;
        ctx.body = `HANDLER-ERROR ${PAID_BODY}`;
        return;
      case '/throws':
        throw new Error('handler exploded');
      case '/bypass':
        ctx.respond = false;
        ctx.res.writeHead(200, { 'content-type': 'text/plain' });
        ctx.res.end(PAID_BODY);
        return;
      case '/pre-compressed':
        // A handler serving a file stored compressed (koa-send's `gzip` option): the bytes are gzip.
        ctx.type = 'text/plain';
        ctx.set('Content-Encoding', 'gzip');
        ctx.set('Vary', 'Accept-Encoding');
        ctx.body = gzipSync(PAID_BODY);
        return;
      case '/text':
        ctx.set('X-Handler-Secret', 'leak');
        ctx.body = PAID_BODY;
        return;
      default:
        ctx.set('X-Handler-Secret', 'leak');
        ctx.body = { data: PAID_BODY, path: ctx.path };
    }
  });
  const server = http.createServer(app.callback());
  const url = await listen(server);
  return {
    url,
    middleware,
    registry,
    logs,
    get handlerRuns() {
      return state.handlerRuns;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Fresh fakes (startFakes) and a seller app on them (startSellerApp with `options`) for each test of the
 * enclosing suite, flushed and stopped after it.
 */
export function useSellerAppPerTest(options: Partial<X402KoaOptions> = {}): {
  facilitator: FakeServer;
  platform: FakeServer;
  app: SellerApp;
} {
  let current: { facilitator: FakeServer; platform: FakeServer; app: SellerApp } | undefined;
  beforeEach(async () => {
    const { facilitator, platform } = await startFakes();
    current = {
      facilitator,
      platform,
      app: await startSellerApp({ facilitator_url: facilitator.url, api_url: platform.url, ...options }),
    };
  });
  afterEach(async () => {
    if (!current) return;
    const { facilitator, platform, app } = current;
    await app.middleware.flush();
    await Promise.all([app.stop(), facilitator.stop(), platform.stop()]);
  });
  return {
    facilitator: lateBound(() => current?.facilitator, 'the fake facilitator'),
    platform: lateBound(() => current?.platform, 'the fake platform'),
    app: lateBound(() => current?.app, 'the seller app'),
  };
}

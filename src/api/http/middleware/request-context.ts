/**
 * Request id (echoed as X-Request-Id; a caller-supplied id is kept only if it is short and plain),
 * latency metrics by route template, and one structured access-log line per request (no bodies, no
 * Authorization header) — but for a served /metrics scrape: a /metrics the app refuses (404 once it has a
 * listener of its own, src/api/http/routes/ops-routes.ts) is logged as any other request.
 */
import { randomFillSync } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';

const SAFE_ID = /^[A-Za-z0-9_\-.]{1,64}$/;

/** Random bytes of one request id (128 bits, as many as a UUID holds; shown as 32 hex digits). */
const ID_BYTES = 16;
/**
 * Ids' random bytes drawn from the CSPRNG 256 ids at a time (as `randomUUID()` draws its own), each id's bytes used
 * once: an id names a request in logs and error bodies and grants nothing, but stays as hard to guess as before.
 */
const idPool = Buffer.alloc(ID_BYTES * 256);
let idPoolUsed = idPool.length;

/** `req_` and 32 lower-case hex digits of fresh random bytes. */
export function newRequestId(): string {
  if (idPoolUsed === idPool.length) {
    randomFillSync(idPool);
    idPoolUsed = 0;
  }
  const start = idPoolUsed;
  idPoolUsed += ID_BYTES;
  return `req_${idPool.toString('hex', start, idPoolUsed)}`;
}

export function requestContext(log: Logger, metrics: TreasuryMetrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : newRequestId();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      // At warn and above (a loaded deployment's usual level) nothing of the line is built.
      if ((route !== '/metrics' || ctx.status !== 200) && log.isLevelEnabled('info')) {
        log.info(
          {
            request_id: requestId,
            method: ctx.method,
            route,
            status: ctx.status,
            duration_ms: Math.round(seconds * 1e4) / 10,
          },
          'request',
        );
      }
    }
  };
}

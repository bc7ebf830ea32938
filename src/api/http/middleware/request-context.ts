/**
 * Request id (echoed as X-Request-Id; a caller-supplied id is kept only if it is short and plain),
 * latency metrics by route template, and one structured access-log line per request (no bodies, no
 * Authorization header) — but for a served /metrics scrape: a /metrics the app refuses (404 once it has a
 * listener of its own, src/api/http/routes/ops-routes.ts) is logged as any other request.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';

const SAFE_ID = /^[A-Za-z0-9_\-.]{1,64}$/;

export function requestContext(log: Logger, metrics: TreasuryMetrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : `req_${randomUUID().replace(/-/g, '')}`;
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

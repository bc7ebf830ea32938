/**
 * The gate's HTTP server (docs/gate.md): for each request, in this order —
 *   1. its own routes, unless the request is routed by host: `GET /livez`, `GET /readyz` (503 until the first
 *      catalogue), `GET /metrics`;
 *   2. the seller, by host or path prefix (gate-router.ts); none → 404 `gate_seller_not_found`; no catalogue
 *      yet → 503 `gate_not_ready` with `Retry-After: 5`;
 *   3. a declared request body above the cap → 413 `payload_too_large`, before any payment is looked at;
 *   4. the endpoint, by method and path (seller-table.ts); none → the paywall's unpaid pass-through (`/health`,
 *      OPTIONS) or 404 `gate_endpoint_not_found`;
 *   5. the paywall (src/x402/seller/paid-request.ts, the Koa middleware's own rules and status table) with the
 *      gate's port (gate-port.ts): challenge, verify, proxy to the origin, hold, settle, release, report.
 *
 * Defends against: selling what the seller did not register (no default price; unknown paths are 404), a
 * crash in one request taking the process down (500 `internal_error`, logged). Does not defend against: a
 * buyer's Host header naming the challenge's resource URL wrongly (the resource is informational; the terms
 * are the catalogue's).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { PaidRequestCore, passesUnpaid, type PaidRequest } from '../x402/seller/paid-request.js';
import type { X402Logger } from '../x402/seller/seller-options.js';
import type { CatalogueSource } from './catalogue-source.js';
import type { GateConfig } from './gate-config.js';
import type { GateMetrics } from './gate-metrics.js';
import { gatePort, writeGateError, writeJson } from './gate-port.js';
import { routeRequest } from './gate-router.js';
import type { OriginProxy } from './origin-proxy.js';
import { matchEndpoint } from './seller-table.js';

export interface GateServerDeps {
  config: GateConfig;
  catalogue: CatalogueSource;
  core: PaidRequestCore;
  proxy: OriginProxy;
  metrics: GateMetrics;
  logger: X402Logger;
}

async function ownRoute(deps: GateServerDeps, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (req.method !== 'GET') return false;
  if (req.url === '/livez') {
    writeJson(res, 200, { 'cache-control': 'no-store' }, { ok: true });
    return true;
  }
  if (req.url === '/readyz') {
    const table = deps.catalogue.table;
    writeJson(
      res,
      table ? 200 : 503,
      { 'cache-control': 'no-store' },
      table ? { ready: true, sellers: table.sellers, endpoints: table.endpoints } : { ready: false },
    );
    return true;
  }
  if (req.url === '/metrics') {
    const text = await deps.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': deps.metrics.registry.contentType });
    res.end(text);
    return true;
  }
  return false;
}

export async function handleGateRequest(
  deps: GateServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { config } = deps;
  const rawUrl = req.url ?? '/';
  const routed = routeRequest(rawUrl, req.headers.host, config.baseDomain);
  if ((!routed || routed.by === 'prefix') && (await ownRoute(deps, req, res))) return;
  if (!routed) return writeGateError(res, 'gate_seller_not_found');
  const table = deps.catalogue.table;
  if (!table) return writeGateError(res, 'gate_not_ready', { 'retry-after': '5' });
  const seller = table.bySlug.get(routed.slug);
  if (!seller) return writeGateError(res, 'gate_seller_not_found');

  const declared = req.headers['content-length'];
  if (declared !== undefined && !(Number(declared) <= config.maxRequestBytes))
    return writeGateError(res, 'payload_too_large', { connection: 'close' });

  const method = req.method ?? 'GET';
  const port = gatePort({
    req,
    res,
    origin: seller.origin,
    routed,
    proxy: deps.proxy,
    maxHeldBytes: config.maxHeldBytes,
    metrics: deps.metrics,
  });
  const endpoint = matchEndpoint(seller, method, routed.originPath);
  if (!endpoint) {
    if (passesUnpaid(method, routed.originPath) && !seller.problem) return port.pass();
    return writeGateError(res, 'gate_endpoint_not_found');
  }
  const host = req.headers.host ?? `${config.host}:${config.port}`;
  const paid: PaidRequest = {
    method,
    path: routed.originPath,
    href: `http://${host}${rawUrl}`,
    header: (name) => req.headers[name],
  };
  await deps.core.handle(endpoint.site, paid, port);
}

export function createGateServer(deps: GateServerDeps): http.Server {
  const server = http.createServer((req, res) => {
    handleGateRequest(deps, req, res).catch((err: unknown) => {
      deps.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'gate: request failed');
      writeGateError(res, 'internal_error');
    });
  });
  server.requestTimeout = 5 * 60_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return server;
}

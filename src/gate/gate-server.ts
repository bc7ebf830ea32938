/**
 * The gate's HTTP server (docs/gate.md): for each request, in this order —
 *   1. the request target, read once under the gate's path rule (request-target.ts): a target that could be
 *      resolved two ways is 400 `gate_path_refused`; the accepted one is what is priced and what the origin
 *      receives, unchanged;
 *   2. its own routes, unless the request is routed by host: `GET /livez`, `GET /readyz` (503 until the first
 *      catalogue), `GET /metrics` unless GATE_METRICS_PORT gives it a listener of its own (then it is routed as
 *      any other path: 404 `gate_seller_not_found`), and with GATE_PUBLIC_URL
 *      `GET /.well-known/xx-gate-verification.txt` (the account's token, once the platform issued it:
 *      gate-address-proof.ts) — that one on every `<label>.<GATE_BASE_DOMAIN>` host too, before the label is
 *      read as a slug (the platform proves the base domain at a random label; no seller sells that path by host);
 *   3. the seller, by host or path prefix (gate-router.ts); none → 404 `gate_seller_not_found`; no catalogue
 *      yet → 503 `gate_not_ready` with `Retry-After: 5`;
 *   4. the request body, read and counted whatever the method (request-body.ts): over the cap → 413
 *      `payload_too_large`, before any payment is looked at;
 *   5. OPTIONS is answered here (cors-preflight.ts), never forwarded; a request that asks the origin to run
 *      another method (an override header naming another method, a `_method` parameter in the query or the body
 *      read in 4, method-override.ts) is 400 `gate_method_override_refused`;
 *   6. the endpoint, by method and path (matching-endpoint.ts); `/health` that no endpoint of its method sells
 *      passes unpaid as a bodiless GET or HEAD only (else 404 `gate_endpoint_not_found`) — one that sells it is
 *      charged like any route; otherwise none → 404 `gate_endpoint_not_found`, one the seller has not priced →
 *      404 `gate_endpoint_not_priced`;
 *   7. the paywall (src/x402/seller/paid-request.ts, the Koa middleware's own rules and status table) with the
 *      gate's port (gate-port.ts): challenge, verify, proxy to the origin, hold, settle, release, report.
 *
 * Defends against: selling what the seller did not register or price (no default price; unknown paths are 404),
 * a path priced as one route and served as another, a method priced as one and run as another (an override),
 * anything reaching the origin unpaid but what the seller made free, a crash in one request taking the process
 * down (500 `internal_error`, logged), every seller's counts readable on the public port once the operator gave
 * /metrics a listener of its own. The challenge's resource URL names the scheme of GATE_PUBLIC_URL (a TLS front's
 * https) or, without one, the gate's own http — never a scheme a request header claims. Does not defend against: a
 * buyer's Host header naming the challenge's resource URL wrongly (the resource is informational; the terms are the
 * catalogue's).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { HEALTH_PATH, PaidRequestCore, type PaidRequest } from '../x402/seller/paid-request.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import type { CatalogueSource } from './catalogue-source.js';
import type { GateConfig } from './gate-config.js';
import type { GateMetrics } from './gate-metrics.js';
import { gatePort, writeGateError, writeJson } from './gate-port.js';
import { preflightHeaders } from './cors-preflight.js';
import { routeRequest, type RoutedRequest } from './gate-router.js';
import { endpointsForPath, matchEndpoint } from './matching-endpoint.js';
import type { OriginProxy } from './origin-proxy.js';
import { readRequestBody } from './request-body.js';
import { readRequestTarget } from './request-target.js';
import { asksMethodOverride } from './method-override.js';
import { bodySha256 } from '../x402/seller/payment-identifier-fingerprint.js';
import type { GateSellerEntry } from './seller-table.js';
import type { UptimeBuckets } from './uptime-buckets.js';
import type { GateAddressProof } from './gate-address-proof.js';
import { GATE_VERIFICATION_PATH } from '../shared/gate-address-schema.js';
import { forwardedAddress, publicAddressOf } from './forwarded-address.js';

export interface GateServerDeps {
  config: GateConfig;
  catalogue: CatalogueSource;
  core: PaidRequestCore;
  proxy: OriginProxy;
  metrics: GateMetrics;
  logger: X402Logger;
  /** The public address proof (./gate-address-proof.ts): the token served at GATE_VERIFICATION_PATH. */
  address?: Pick<GateAddressProof, 'token'> | undefined;
  /** Where what the origins answered is counted (./uptime-buckets.ts); undefined: not recorded. */
  uptime?: UptimeBuckets | undefined;
}

/** GET GATE_VERIFICATION_PATH: the account's token (404 before the platform issued one). */
function answerVerification(deps: GateServerDeps, res: ServerResponse): void {
  const token = deps.address?.token;
  if (!token) return writeGateError(res, 'gate_seller_not_found');
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(`${token}\n`);
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
  if (req.url === GATE_VERIFICATION_PATH) {
    answerVerification(deps, res);
    return true;
  }
  if (req.url === '/metrics' && !deps.config.metricsListener) {
    const text = await deps.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': deps.metrics.registry.contentType });
    res.end(text);
    return true;
  }
  return false;
}

/** The seller a routed request names, or the answer already written (not ready, unknown seller). */
function sellerOf(deps: GateServerDeps, res: ServerResponse, routed: RoutedRequest): GateSellerEntry | undefined {
  const table = deps.catalogue.table;
  if (!table) return void writeGateError(res, 'gate_not_ready', { 'retry-after': '5' });
  const seller = table.bySlug.get(routed.slug);
  if (!seller) return void writeGateError(res, 'gate_seller_not_found');
  return seller;
}

/** OPTIONS: answered here (cors-preflight.ts), never forwarded. */
function answerOptions(req: IncomingMessage, res: ServerResponse, seller: GateSellerEntry, path: string): void {
  const entries = endpointsForPath(seller, path);
  if (entries.length === 0) return writeGateError(res, 'gate_endpoint_not_found');
  const origin = req.headers.origin;
  const asked = req.headers['access-control-request-headers'];
  res.writeHead(204, preflightHeaders(entries, { origin, requestHeaders: Array.isArray(asked) ? asked[0] : asked }));
  res.end();
}

/** The scheme buyers reach the gate by: GATE_PUBLIC_URL's (https behind a TLS front), else the gate's own http. */
function resourceScheme(config: GateConfig): 'http' | 'https' {
  return config.publicUrl?.startsWith('https://') ? 'https' : 'http';
}

export async function handleGateRequest(
  deps: GateServerDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { config } = deps;
  const target = readRequestTarget(req.url ?? '/');
  if (!target.ok) return writeGateError(res, 'gate_path_refused', { connection: 'close' });
  const routed = routeRequest(target, req.headers.host, config.baseDomain);
  if ((!routed || routed.by === 'prefix') && (await ownRoute(deps, req, res))) return;
  // Any `<label>.<GATE_BASE_DOMAIN>` serves the token before its label is read as a slug: the platform proves the
  // base domain at a random label (src/api/sellers/gate-address/gate-address-service.ts).
  if (routed?.by === 'host' && req.method === 'GET' && req.url === GATE_VERIFICATION_PATH)
    return answerVerification(deps, res);
  if (!routed) return writeGateError(res, 'gate_seller_not_found');
  const seller = sellerOf(deps, res, routed);
  if (!seller) return;

  const read = await readRequestBody(req, config.maxRequestBytes);
  if (read.kind === 'too_large') return writeGateError(res, 'payload_too_large', { connection: 'close' });
  if (read.kind === 'aborted') return;
  const method = req.method ?? 'GET';
  if (method === 'OPTIONS') return answerOptions(req, res, seller, routed.originPath);
  if (asksMethodOverride(method, req.headers, target.query, read.body))
    return writeGateError(res, 'gate_method_override_refused');

  const port = (body: Buffer | undefined, endpointId?: string) =>
    gatePort({
      observe: endpointId && deps.uptime ? (answered) => deps.uptime?.record(endpointId, answered) : undefined,
      req,
      res,
      origin: seller.origin,
      routed,
      body,
      proxy: deps.proxy,
      maxHeldBytes: config.maxHeldBytes,
      metrics: deps.metrics,
    });
  const match = matchEndpoint(seller, method, routed.originPath);
  // `/health` that no endpoint of its method sells goes unpaid as a bodiless GET or HEAD, or not at all.
  if (routed.originPath === HEALTH_PATH && match.kind !== 'sold') {
    if ((method === 'GET' || method === 'HEAD') && !seller.problem) return port(undefined).pass();
    return writeGateError(res, 'gate_endpoint_not_found');
  }
  if (match.kind === 'none') return writeGateError(res, 'gate_endpoint_not_found');
  if (match.kind === 'unpriced') return writeGateError(res, 'gate_endpoint_not_priced');
  // The priced resource names the address forwarded to the origin: with GATE_PUBLIC_URL, never the buyer's Host.
  const publicAddress = publicAddressOf(config.publicUrl);
  const host = publicAddress
    ? forwardedAddress(publicAddress, routed.by, req.headers.host, false).host
    : (req.headers.host ?? `${config.host}:${config.port}`);
  const paid: PaidRequest = {
    method,
    path: routed.originPath,
    href: `${resourceScheme(config)}://${host}${target.url}`,
    prefix: routed.prefix,
    header: (name) => req.headers[name],
    bodySha256: () => bodySha256(read.body),
  };
  await deps.core.handle(match.entry.site, paid, port(read.body, match.entry.endpoint.endpoint_id));
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

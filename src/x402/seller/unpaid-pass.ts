/**
 * Rule 1 of the paywall (./paid-request.ts): what a request gets before any payment is looked at. Pure: it reads
 * the site's configuration and the request's method, path and headers, and answers nothing itself.
 *   - `free`: the route's price is 0 (`route_prices` of `"0"` or `""`): it passes on every method, OPTIONS
 *     included, as the seller chose;
 *   - `probe`: a bodiless GET or HEAD of `/health`, on a site that lets the probe through (the Koa middleware),
 *     when `route_prices` does not price `/health` — a load balancer's probe never meets a 402;
 *   - `preflight`: OPTIONS to a priced route — answered by the paywall with ./cors-preflight.ts's 204, never
 *     passed (a CORS preflight cannot carry a payment, and the paid work must not run for one);
 *   - `priced`: anything else, at `price`.
 *
 * Defends against: the paid work running unpaid for a request that only looks exempt — OPTIONS to a priced route,
 * `/health` with another method, a body, another spelling (`/HEALTH`, `/health/`) or a price of its own.
 * Does not defend against: a seller whose handler serves paid content at an unpriced `/health` (the probe is
 * theirs, free unless priced); a seller's own CORS policy for priced routes (the paywall's preflight answer
 * stands in for it unless their CORS middleware runs before the paywall).
 */
import { preflightHeaders } from './cors-preflight.js';
import type { PaidRequest } from './paid-request-port.js';
import { priceOf } from './route-price.js';
import { routePriceKey, type ResolvedX402Config } from './seller-options.js';

/** The path of the probe that passes unpaid (docs/seller-middleware.md). */
export const HEALTH_PATH = '/health';
const HEALTH_KEY = routePriceKey(HEALTH_PATH);

/** What the paywall sells at a priced route: every method (it prices paths, not methods). */
const PAYWALL_METHODS = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'] as const;

export type UnpaidPass =
  | { kind: 'free' }
  | { kind: 'probe' }
  | { kind: 'preflight'; headers: Record<string, string> }
  | { kind: 'priced'; price: bigint };

/** The first value of a request header (a repeated one is an array). */
function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Whether the request announces a body (a length other than 0, or a transfer coding). */
function hasBody(header: PaidRequest['header']): boolean {
  if (header('transfer-encoding') !== undefined) return true;
  const length = header('content-length');
  return length !== undefined && length !== '0';
}

/** Rule 1 for `req` on a site configured by `config`; `probe`: the site lets a bodiless GET or HEAD of `/health` through. */
export function unpaidPass(
  config: ResolvedX402Config,
  req: Pick<PaidRequest, 'method' | 'path' | 'header'>,
  probe: boolean,
): UnpaidPass {
  const price = priceOf(config, req.path);
  if (price === 0n) return { kind: 'free' };
  const { method } = req;
  if (
    probe &&
    req.path === HEALTH_PATH &&
    (method === 'GET' || method === 'HEAD') &&
    !config.routePrices.has(HEALTH_KEY) &&
    !hasBody(req.header)
  )
    return { kind: 'probe' };
  if (method === 'OPTIONS')
    return {
      kind: 'preflight',
      headers: preflightHeaders(PAYWALL_METHODS, {
        origin: firstValue(req.header('origin')),
        requestHeaders: firstValue(req.header('access-control-request-headers')),
      }),
    };
  return { kind: 'priced', price };
}

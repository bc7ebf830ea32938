/**
 * OPTIONS is the gate's to answer, never the origin's: a request to a sold path gets 204 with the preflight
 * headers of the methods sold there (src/x402/seller/cors-preflight.ts, the same answer the Koa middleware gives
 * for a priced route: `Allow`, and for a CORS preflight the Access-Control-* headers). A path nothing is sold at
 * is 404 `gate_endpoint_not_found`, as for any method.
 *
 * Defends against: OPTIONS (with a body, to any path) reaching the origin unpaid — nothing is forwarded. Does
 * not defend against: an origin's own CORS policy for OPTIONS (it is not asked); the paid answers carry the
 * origin's own CORS headers.
 */
import { preflightHeaders as preflightFor, type PreflightRequest } from '../x402/seller/cors-preflight.js';
import type { GateEndpointEntry } from './seller-table.js';

/** The 204 headers for an OPTIONS request to a path where `entries` are sold. */
export function preflightHeaders(
  entries: readonly GateEndpointEntry[],
  request: PreflightRequest,
): Record<string, string> {
  return preflightFor(
    entries.map((e) => e.endpoint.method),
    request,
  );
}

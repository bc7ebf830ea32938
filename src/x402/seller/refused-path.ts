/**
 * The seller middleware's side of the path rule (./request-path-rule.ts, the gate's rule): before the paywall
 * prices a request, its path is held to the rule, and a path the rule refuses is answered here — 400
 * `x402_path_refused` with the rule's reason as `problem`, `Cache-Control: no-store`, `Connection: close` (its
 * body is never read) — so no 402 is issued, no payment is looked at and the paid work never runs. Every request
 * that reaches the middleware is held to it, a free route's included: the rule is about the path, not its price,
 * and a plain spelling of any route passes. Pure: it answers nothing itself.
 *
 * Defends against: a spelling of a priced route that the seller's handler resolves to it (koa-static, koa-send,
 * `path.join(root, decodeURIComponent(ctx.path))`: `/data/./premium.csv`, `/x/%2e%2e/data/premium.csv`,
 * `/data%2fpremium.csv`) being priced by `route_prices` as another, cheaper path. Does not defend against: what
 * the rule does not (./request-path-rule.ts); a handler that reads another path than the one checked (the
 * adapter checks the path it prices, Koa's `ctx.path`).
 */
import { ERROR_CODES } from '../../shared/error-codes.js';
import type { PaywallAnswer } from './paywall-answers.js';
import { requestPathProblem } from './request-path-rule.js';

export const PATH_REFUSED = 'x402_path_refused';

/** The 400 answer for a request path the rule refuses, or undefined when the path may be priced as is. */
export function refusedPathAnswer(path: string): PaywallAnswer | undefined {
  const problem = requestPathProblem(path);
  if (problem === undefined) return undefined;
  const { status, message } = ERROR_CODES[PATH_REFUSED];
  return {
    status,
    headers: { 'Cache-Control': 'no-store', Connection: 'close' },
    body: { error_code: PATH_REFUSED, user_message: message, problem },
  };
}

/**
 * Entry of the Koa seller middleware: `x402Koa(options)` (also the default export) and its wrapper form
 * `withX402(app, options)`, its options and
 * configuration error, the decode error callers may meet, and `setSettlementOverrides` for `upto` handlers. See x402-koa.ts for the request flow.
 */
import { x402Koa } from './x402-koa.js';

export { x402Koa, X402_MIDDLEWARE_ERRORS, type X402KoaMiddleware } from './x402-koa.js';
export { withX402 } from './with-x402.js';
export { X402ConfigError } from '../seller/x402-config-error.js';
export { resolveX402Options, routePriceKey, type ResolvedX402Config } from '../seller/seller-options.js';
export type { X402KoaOptions, X402Logger } from '../seller/x402-koa-options.js';
export {
  createX402MiddlewareMetrics,
  type X402MiddlewareMetrics,
  type RequestOutcome,
  type LedgerOutcome,
} from '../seller/middleware-metrics.js';
export { X402DecodeError } from '../x402-decode-error.js';
export {
  setSettlementOverrides,
  resolveSettlementAmount,
  SETTLEMENT_OVERRIDES_HEADER,
  type SettlementOverrides,
} from './settlement-amount.js';

export default x402Koa;

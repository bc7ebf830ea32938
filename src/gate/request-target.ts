/**
 * The gate's path rule (docs/security-model.md#the-gates-path-rule): the request target is read once, here,
 * and either refused (400 `gate_path_refused`, gate-server.ts) or accepted as is — never rewritten by a second
 * parser. What is priced (the endpoint match, the route in the ledger) and what the origin receives on its
 * request line are the same string.
 *
 * The rule itself — what is refused and why, what it does not defend against — lives in
 * src/x402/seller/request-path-rule.ts, one implementation shared with the Koa seller middleware, which holds
 * every `ctx.path` to it (400 `x402_path_refused`). This module is the gate's name for it.
 */
export {
  MAX_TARGET_LENGTH,
  readRequestTarget,
  type RequestTarget,
  type TargetProblem,
} from '../x402/seller/request-path-rule.js';

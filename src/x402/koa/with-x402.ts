/**
 * The wrapper form of the Koa seller middleware (docs/seller-middleware.md, "Wrapping an app"): `withX402(app,
 * options)` gates every route of `app` except `/health` and returns the same app — for sellers who hand an app to
 * a function, as the ASGI-style middlewares do, instead of placing `app.use(x402Koa(options))` themselves.
 *
 * Defends: a route registered before the paywall slipping past it — the middleware goes first in the app's chain,
 * wherever the call is made; `/health` stays free as a bodiless GET or HEAD (a load balancer's probe never meets a
 * 402) unless `route_prices` prices it, as with `x402Koa` (the paywall's rule 1, ../seller/unpaid-pass.ts); an app
 * wrapped twice (refused: two paywalls would ask for two payments). Does not defend: a call made after the app
 * began serving — Koa composes its chain when it starts listening, so wrap it before.
 */
import type Koa from 'koa';
import type { X402KoaOptions } from '../seller/x402-koa-options.js';
import { x402Koa } from './x402-koa.js';

const wrapped = new WeakSet<Koa>();

/** Gates every route of `app` but the `/health` probe (free unless `route_prices` prices it) and returns `app`. */
export function withX402<A extends Koa>(app: A, options: X402KoaOptions): A {
  if (wrapped.has(app)) throw new TypeError('withX402: this app is already wrapped');
  const middleware = x402Koa(options);
  app.middleware.unshift(middleware as Koa.Middleware);
  wrapped.add(app);
  return app;
}

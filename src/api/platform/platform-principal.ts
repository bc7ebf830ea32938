/**
 * The bearer of a platform route (identity, PATs, whoami, agents, sellers, the ledger, the gate): the
 * authenticator's check of the request's `Authorization` header as a platform route asks it, at the time
 * of the request; `platformRouter` is how each of those route modules starts (its router and that check).
 *
 * Defends: a platform route accepting the removed legacy Treasury master key (`platform: true` refuses it
 * with 401 `master_key_removed`; src/api/auth/authenticator.ts). Does not defend: which routes a principal
 * of the right kind may call (each route's own scope check).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';

/** The authenticated principal of a platform route's request. */
export function platformPrincipalOf(auth: Authenticator): (ctx: Context) => Promise<Principal> {
  return (ctx) => auth.authenticate(ctx.get('authorization'), new Date(), { platform: true });
}

/** A router of platform routes, and how its routes read their bearer. */
export function platformRouter(auth: Authenticator): {
  router: Router;
  principalOf: (ctx: Context) => Promise<Principal>;
} {
  return { router: new Router(), principalOf: platformPrincipalOf(auth) };
}

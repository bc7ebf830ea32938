/**
 * The gate's public address (docs/gate.md#the-gates-public-address), all taking a PAT with the gate scope and
 * all scoped to that PAT's account (./gate-address-service.ts):
 *   GET  /v1/gate/address          the account's gate address, its token and whether it is verified;
 *   POST /v1/gate/address          names the address (`{url, network, base_domain?}`); a new one is unproven;
 *   POST /v1/gate/address/verify   the platform fetches the token from the address (and from a random name under
 *                                  the base domain) and marks it verified.
 *
 * Defends: a tenant setting or proving another account's gate address (the account is the bearer's, never a
 * parameter); a bearer without the gate scope (403); a malformed or unbounded URL or base domain (400, the shared
 * schema).
 * Does not defend: what the proof proves (./gate-address-service.ts).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireGateScope, type Authenticator } from '../../auth/authenticator.js';
import { validate } from '../../http/validate.js';
import { platformRouter } from '../../platform/platform-principal.js';
import { gateAddressBodySchema } from '../../../shared/gate-address-schema.js';
import type { GateAddressService } from './gate-address-service.js';

export function gateAddressRoutes(deps: { auth: Authenticator; addresses: GateAddressService }): Router {
  const { router, principalOf } = platformRouter(deps.auth);
  const accountOf = async (ctx: Context) => requireGateScope(await principalOf(ctx));

  router.get('/v1/gate/address', async (ctx) => {
    ctx.body = await deps.addresses.read(await accountOf(ctx));
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/v1/gate/address', async (ctx) => {
    const accountId = await accountOf(ctx);
    ctx.body = await deps.addresses.set(accountId, validate(gateAddressBodySchema, ctx.state.body));
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/v1/gate/address/verify', async (ctx) => {
    ctx.body = await deps.addresses.verify(await accountOf(ctx));
    ctx.set('Cache-Control', 'no-store');
  });

  return router;
}

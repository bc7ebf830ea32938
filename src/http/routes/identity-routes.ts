/**
 * Platform identity and token routes: POST /v1/identity/nonce, POST /v1/identity/init (SIWE / SIWS →
 * `as_` session), POST /v1/identity/exchange-pat (agent PAT → session), GET /v1/auth/whoami, and
 * /v1/pats (create, list page by page, revoke, change daily cap) with an account session. Platform routes
 * refuse the removed master keys with 401 `master_key_removed`.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { requireSessionAccount, type Authenticator } from '../../auth/authenticator.js';
import { AppError } from '../../errors/app-error.js';
import type { IdentityService } from '../../identity/identity-service.js';
import type { PatService } from '../../services/pat-service.js';
import { createPatBodySchema, initBodySchema, patchPatBodySchema, patIdSchema } from '../schemas/identity-schemas.js';
import { pageQuerySchema } from '../schemas/page-query-schema.js';
import { validate } from '../validate.js';

const AUTH_TYPE = { pat: 'pat', session: 'session', api_key: 'treasury_api_key' } as const;

export function identityRoutes(deps: { auth: Authenticator; identity: IdentityService; pats: PatService }): Router {
  const router = new Router();
  const platformPrincipal = (ctx: Context) => deps.auth.authenticate(ctx.get('authorization'), new Date(), { platform: true });

  router.post('/v1/identity/nonce', async (ctx) => {
    ctx.status = 201;
    ctx.body = await deps.identity.issueNonce();
  });

  router.post('/v1/identity/init', async (ctx) => {
    const body = validate(initBodySchema, ctx.state.body);
    const grant = await deps.identity.init(body);
    ctx.status = grant.created ? 201 : 200;
    ctx.body = grant;
  });

  router.post('/v1/identity/exchange-pat', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    ctx.body = await deps.identity.exchangePat(principal);
  });

  router.get('/v1/auth/whoami', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    ctx.body =
      principal.kind === 'admin'
        ? { auth_type: 'operator', scope_type: 'operator', scope_id: null }
        : { auth_type: AUTH_TYPE[principal.tokenKind], scope_type: principal.scopeType, scope_id: principal.scopeId, token_id: principal.tokenId };
  });

  router.post('/v1/pats', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    const accountId = requireSessionAccount(principal);
    const body = validate(createPatBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.pats.create(accountId, body, principal.actor);
  });

  router.get('/v1/pats', async (ctx) => {
    const accountId = requireSessionAccount(await platformPrincipal(ctx));
    ctx.body = await deps.pats.list(accountId, validate(pageQuerySchema, ctx.query, 'query'));
  });

  router.delete('/v1/pats/:id', async (ctx) => {
    const accountId = requireSessionAccount(await platformPrincipal(ctx));
    const patId = validate(patIdSchema, ctx.params.id, 'path');
    ctx.body = await deps.pats.revoke(accountId, patId);
    deps.auth.forget(patId);
  });

  router.patch('/v1/pats/:id', async (ctx) => {
    const accountId = requireSessionAccount(await platformPrincipal(ctx));
    const patId = validate(patIdSchema, ctx.params.id, 'path');
    const body = validate(patchPatBodySchema, ctx.state.body);
    ctx.body = await deps.pats.setDailyCap(accountId, patId, body.daily_cap_usd);
    deps.auth.forget(patId);
  });

  return router;
}

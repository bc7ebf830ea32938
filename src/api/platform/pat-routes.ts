/**
 * The account's PAT routes: /v1/pats (create, list page by page, revoke, change daily cap: the owner, i.e. a
 * sign-in session — src/api/auth/session-powers.ts). A revoked or changed PAT leaves the bearer cache at once.
 *
 * Defends: a PAT managed by anyone but the account's owner session (an exchanged session is
 * `fresh_sign_in_required`); another account's PAT answers `pat_not_found`. Does not defend: what a PAT may
 * mint or spend (./pat-service.ts and src/api/auth/credential-lineage.ts).
 */
import type Router from '@koa/router';
import { queryOf } from '../http/request-query.js';
import type { Authenticator } from '../auth/authenticator.js';
import { requireSession } from '../auth/session-powers.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { validate } from '../http/validate.js';
import type { PatService } from './pat-service.js';
import { createPatBodySchema, patchPatBodySchema, patIdSchema } from './pat-schemas.js';
import { platformRouter } from './platform-principal.js';

export function patRoutes(deps: { auth: Authenticator; pats: PatService }): Router {
  const { router, principalOf: platformPrincipal } = platformRouter(deps.auth);

  router.post('/v1/pats', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    const { accountId, sessionId } = requireSession(principal, 'owner');
    const body = validate(createPatBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.pats.create(accountId, body, principal.actor, sessionId);
  });

  router.get('/v1/pats', async (ctx) => {
    const { accountId } = requireSession(await platformPrincipal(ctx), 'owner');
    ctx.body = await deps.pats.list(accountId, validate(pageQuerySchema, queryOf(ctx), 'query'));
  });

  router.delete('/v1/pats/:id', async (ctx) => {
    const { accountId } = requireSession(await platformPrincipal(ctx), 'owner');
    const patId = validate(patIdSchema, ctx.params.id, 'path');
    ctx.body = await deps.pats.revoke(accountId, patId);
    deps.auth.forget(patId);
  });

  router.patch('/v1/pats/:id', async (ctx) => {
    const { accountId } = requireSession(await platformPrincipal(ctx), 'owner');
    const patId = validate(patIdSchema, ctx.params.id, 'path');
    const body = validate(patchPatBodySchema, ctx.state.body);
    ctx.body = await deps.pats.setDailyCap(accountId, patId, body.daily_cap_usd);
    deps.auth.forget(patId);
  });

  return router;
}

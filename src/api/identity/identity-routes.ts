/**
 * Platform identity and token routes: POST /v1/identity/nonce, POST /v1/identity/init (SIWE / SIWS →
 * `as_` sign-in session), POST /v1/identity/exchange-pat (agent PAT → a session bound to that agent),
 * GET /v1/auth/whoami (which kind of session, and its agent; its wallets' `policy_state`), POST /v1/auth/logout (the caller's session),
 * POST /v1/auth/sessions/revoke-all (every session of the account: the owner). The account's PATs are the
 * platform's (src/api/platform/pat-routes.ts). Platform routes refuse the removed master keys with 401
 * `master_key_removed`.
 */
import Router from '@koa/router';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requireSession } from '../auth/session-powers.js';
import type { IdentityService } from './identity-service.js';
import { initBodySchema } from './sign-in-body.js';
import { platformRouter } from '../platform/platform-principal.js';
import { validate } from '../http/validate.js';
import type { Whoami } from '../../shared/api-responses/identity-responses.js';
import type { PolicyState } from '../../shared/api-responses/wallet-responses.js';

const AUTH_TYPE = { pat: 'pat', session: 'session', api_key: 'treasury_api_key' } as const;

export function identityRoutes(deps: {
  auth: Authenticator;
  identity: IdentityService;
  /** The bearer's wallets' policy state, shown by whoami (the wallets wing answers: ../wallets/bearer-policy-state.ts). */
  policyState: (principal: Principal) => Promise<PolicyState | undefined>;
}): Router {
  const { router, principalOf: platformPrincipal } = platformRouter(deps.auth);

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
    const { ended, ...grant } = await deps.identity.exchangePat(principal);
    for (const id of ended) deps.auth.forget(id);
    ctx.body = grant;
  });

  router.get('/v1/auth/whoami', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    const policyState = await deps.policyState(principal);
    const who: Whoami =
      principal.kind === 'admin'
        ? { auth_type: 'operator', scope_type: 'operator', scope_id: null }
        : {
            auth_type: AUTH_TYPE[principal.tokenKind],
            scope_type: principal.scopeType,
            scope_id: principal.scopeId,
            token_id: principal.tokenId,
            ...(principal.tokenKind === 'pat' ? { gate: principal.gate } : {}),
            ...(principal.tokenKind === 'session'
              ? {
                  session_origin: principal.sessionOrigin,
                  account_id: principal.accountId,
                  agent_id: principal.sessionOrigin === 'pat_exchange' ? principal.scopeId : null,
                  parent_token_id: principal.parentTokenId,
                }
              : {}),
            ...(policyState ? { policy_state: policyState } : {}),
          };
    ctx.body = who;
  });

  router.post('/v1/auth/logout', async (ctx) => {
    const principal = await platformPrincipal(ctx);
    const { sessionId } = requireSession(principal, 'self');
    const { ended, ...loggedOut } = await deps.identity.logout(sessionId);
    ctx.body = loggedOut;
    for (const id of [sessionId, ...ended]) deps.auth.forget(id);
  });

  router.post('/v1/auth/sessions/revoke-all', async (ctx) => {
    const { accountId } = requireSession(await platformPrincipal(ctx), 'owner');
    const { ended, ...revoked } = await deps.identity.revokeAllSessions(accountId);
    ctx.body = revoked;
    deps.auth.forgetSessionsOf(accountId);
    for (const id of ended) deps.auth.forget(id);
  });

  return router;
}

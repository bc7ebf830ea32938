/**
 * Treasury account routes: POST /v1/treasury (operator token), POST /v1/treasuries/{id}/pats and
 * POST /v1/treasuries/{id}/api-key/revoke (the account's holder: its legacy api key or a Treasury PAT of
 * that account, or the operator). Revoking the legacy `xx_treasury_sk_` key is how a holder who moved to
 * Treasury PATs retires it; another account's id is a 404.
 */
import Router from '@koa/router';
import type { Authenticator, Principal } from '../../auth/authenticator.js';
import { requireTreasuryScope } from '../../auth/authenticator.js';
import { AppError } from '../../errors/app-error.js';
import type { AccountService } from '../../services/account-service.js';
import { accountIdSchema } from '../schemas/common-schemas.js';
import { issuePatBodySchema, mintTreasuryBodySchema } from '../schemas/treasury-schemas.js';
import { validate } from '../validate.js';
import type { ApiKeyRevoked } from '../../../shared/api-responses/account-responses.js';

export function treasuryRoutes(deps: { auth: Authenticator; accounts: AccountService }): Router {
  const router = new Router();

  router.post('/v1/treasury', async (ctx) => {
    if (!deps.auth.adminConfigured) throw new AppError('admin_token_not_configured');
    const principal = await deps.auth.authenticate(ctx.get('authorization'));
    if (principal.kind !== 'admin')
      throw new AppError('insufficient_scope', { message: 'Minting a Treasury account needs the operator token.' });
    const body = validate(mintTreasuryBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.accounts.mint(body, principal.actor);
  });

  router.post('/v1/treasuries/:id/pats', async (ctx) => {
    const principal: Principal = await deps.auth.authenticate(ctx.get('authorization'));
    const accountId = validate(accountIdSchema, ctx.params.id, 'path');
    if (principal.kind !== 'admin' && requireTreasuryScope(principal) !== accountId)
      throw new AppError('account_not_found');
    const body = validate(issuePatBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.accounts.issueTreasuryPat(accountId, body, principal.actor);
  });

  router.post('/v1/treasuries/:id/api-key/revoke', async (ctx) => {
    const principal: Principal = await deps.auth.authenticate(ctx.get('authorization'));
    const accountId = validate(accountIdSchema, ctx.params.id, 'path');
    if (principal.kind !== 'admin' && requireTreasuryScope(principal) !== accountId)
      throw new AppError('account_not_found');
    const revoked = await deps.accounts.revokeApiKey(accountId, principal.actor);
    for (const id of revoked.token_ids) deps.auth.forget(id);
    ctx.body = { treasury_id: accountId, revoked_at: revoked.revoked_at } satisfies ApiKeyRevoked;
  });

  return router;
}

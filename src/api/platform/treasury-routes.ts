/**
 * Treasury account routes: POST /v1/treasury (operator token), POST /v1/treasuries/{id}/pats (the operator
 * or the account's legacy api key; never a PAT), POST /v1/treasuries/{id}/api-key/revoke (the account's
 * holder: its legacy api key or a Treasury PAT of that account, or the operator; the key's PATs end with it,
 * except the PAT asking when the key minted it: the key's successor) and POST
 * /v1/treasuries/{id}/credentials/revoke (the operator only: every credential of the account ends, a
 * promoted successor included). Revoking the legacy `xx_treasury_sk_` key is how a holder who moved to
 * Treasury PATs retires it; another account's id is a 404.
 *
 * Defends: a leaked api key laundered into a credential nobody can end. Whoever holds the key can name
 * itself the successor (a bearer secret cannot tell its holder from a thief), and a Treasury PAT of an
 * operator-minted account has no platform account to revoke it with DELETE /v1/pats/{id}; the operator's
 * revocation ends it whatever its lineage, and the operator then mints the holder a new Treasury PAT.
 */
import Router from '@koa/router';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requireTreasuryScope } from '../auth/authenticator.js';
import { AppError } from '../errors/app-error.js';
import type { AccountService } from './account-service.js';
import { accountIdSchema } from '../http/schemas/common-schemas.js';
import { issuePatBodySchema, mintTreasuryBodySchema } from './treasury-schemas.js';
import { validate } from '../http/validate.js';
import type { ApiKeyRevoked, CredentialsRevoked } from '../../shared/api-responses/account-responses.js';

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

  // Who may mint a Treasury PAT: the operator, or the account's legacy api key (the PAT is then its child).
  // A Treasury PAT may not mint Treasury PATs, nor may any other bearer (docs/security-model.md).
  router.post('/v1/treasuries/:id/pats', async (ctx) => {
    const principal: Principal = await deps.auth.authenticate(ctx.get('authorization'));
    const accountId = validate(accountIdSchema, ctx.params.id, 'path');
    let parentTokenId: string | null = null;
    if (principal.kind !== 'admin') {
      if (principal.tokenKind !== 'api_key' || principal.scopeType !== 'treasury')
        throw new AppError('insufficient_scope', {
          message: 'Minting a Treasury PAT needs the operator token or the account’s api key; a PAT cannot mint one.',
        });
      if (principal.scopeId !== accountId) throw new AppError('account_not_found');
      parentTokenId = principal.tokenId;
    }
    const body = validate(issuePatBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.accounts.issueTreasuryPat(accountId, body, { actor: principal.actor, parentTokenId });
  });

  router.post('/v1/treasuries/:id/api-key/revoke', async (ctx) => {
    const principal: Principal = await deps.auth.authenticate(ctx.get('authorization'));
    const accountId = validate(accountIdSchema, ctx.params.id, 'path');
    if (principal.kind !== 'admin' && requireTreasuryScope(principal) !== accountId)
      throw new AppError('account_not_found');
    const successor = principal.kind === 'token' && principal.tokenKind === 'pat' ? principal.tokenId : null;
    const revoked = await deps.accounts.revokeApiKey(accountId, principal.actor, successor);
    for (const id of revoked.token_ids) deps.auth.forget(id);
    ctx.body = { treasury_id: accountId, revoked_at: revoked.revoked_at } satisfies ApiKeyRevoked;
  });

  // The operator's remedy when an account's credentials leaked (the holder cannot end a successor it did not name).
  router.post('/v1/treasuries/:id/credentials/revoke', async (ctx) => {
    if (!deps.auth.adminConfigured) throw new AppError('admin_token_not_configured');
    const principal: Principal = await deps.auth.authenticate(ctx.get('authorization'));
    if (principal.kind !== 'admin')
      throw new AppError('insufficient_scope', {
        message: 'Revoking every credential of a Treasury account needs the operator token.',
      });
    const accountId = validate(accountIdSchema, ctx.params.id, 'path');
    const ended = await deps.accounts.revokeCredentials(accountId, principal.actor);
    for (const id of ended.token_ids) deps.auth.forget(id);
    ctx.body = {
      treasury_id: accountId,
      revoked_at: ended.revoked_at,
      revoked: ended.revoked,
    } satisfies CredentialsRevoked;
  });

  return router;
}

/**
 * A wallet's history for the people who answer for it: GET /v1/wallets/{id}/decisions (the newest policy
 * decisions with their `pd_` ids, outcome, amount, recipient and the rules that refused them) and
 * GET /v1/wallets/{id}/audit (the newest audit events and whether the wallet's hash chain holds), both read by
 * ./wallet-history-service.ts. Read with the wallet's Treasury bearer, or its agent's PAT or exchanged
 * session, like the policy. A wallet of another account is a 404, a revoked one a 410.
 *
 * Defends: another account's history read (the wallet is read within the bearer's account first). Does not
 * defend: what the history says (./wallet-history-service.ts).
 */
import Router from '@koa/router';
import { queryOf } from '../http/request-query.js';
import { walletIdSchema } from '../http/schemas/common-schemas.js';
import { historyQuerySchema } from './wallet-schemas.js';
import { validate } from '../http/validate.js';
import { walletBearer, type WalletRouteDeps } from './wallet-bearer.js';
import type { WalletHistoryService } from './wallet-history-service.js';
import { walletTenant } from '../auth/wallet-tenant.js';

export function walletHistoryRoutes(deps: WalletRouteDeps & { history: WalletHistoryService }): Router {
  const router = new Router();
  /** The wallet the route names, within the bearer's account, and the bearer's tenant (../auth/wallet-tenant.ts). */
  const walletOf = async (ctx: { get(h: string): string; params: Record<string, string> }) => {
    const { principal, accountId } = await walletBearer(deps, ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    return {
      walletId: (await deps.wallets.getActive(accountId, walletId)).id,
      tenant: walletTenant(principal, accountId),
    };
  };

  router.get('/v1/wallets/:id/decisions', async (ctx) => {
    const { walletId } = await walletOf(ctx);
    const { limit } = validate(historyQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.history.decisions(walletId, limit);
  });

  router.get('/v1/wallets/:id/audit', async (ctx) => {
    const { walletId, tenant } = await walletOf(ctx);
    const { limit } = validate(historyQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.history.audit(walletId, limit, tenant);
  });

  return router;
}

/**
 * Sub-wallet routes (Treasury-scoped bearer): create, list, read, rotate, revoke. A wallet of another
 * account is indistinguishable from a missing one (404); a revoked wallet answers 410 on every route.
 */
import Router from '@koa/router';
import type { Knex } from 'knex';
import type { Authenticator } from '../../auth/authenticator.js';
import { requireTreasuryScope, resolveWalletScope } from '../../auth/authenticator.js';
import type { WalletService } from '../../services/wallet-service.js';
import { walletIdSchema } from '../schemas/common-schemas.js';
import { createWalletBodySchema, emptyBodySchema, listWalletsQuerySchema } from '../schemas/wallet-schemas.js';
import { validate } from '../validate.js';

export function walletRoutes(deps: { auth: Authenticator; wallets: WalletService; knex: Knex }): Router {
  const router = new Router();
  /** Treasury bearers manage wallets; an agent PAT may only read its agent's wallets (`read`). */
  const accountOf = async (header: string, read = false) => {
    const principal = await deps.auth.authenticate(header);
    return { accountId: read ? await resolveWalletScope(deps.knex, principal, true) : requireTreasuryScope(principal), actor: principal.actor };
  };

  router.post('/v1/wallets', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const body = validate(createWalletBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.wallets.create(accountId, body, actor);
  });

  router.get('/v1/wallets', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const query = validate(listWalletsQuerySchema, ctx.query, 'query');
    ctx.body = { wallets: await deps.wallets.list(accountId, query) };
  });

  router.get('/v1/wallets/:id', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    ctx.body = deps.wallets.toView(await deps.wallets.getActive(accountId, walletId));
  });

  router.post('/v1/wallets/:id/rotate', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    validate(emptyBodySchema.optional(), ctx.state.body);
    ctx.body = await deps.wallets.rotate(accountId, walletId, actor);
  });

  router.post('/v1/wallets/:id/revoke', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    validate(emptyBodySchema.optional(), ctx.state.body);
    ctx.body = await deps.wallets.revoke(accountId, walletId, actor);
  });

  return router;
}

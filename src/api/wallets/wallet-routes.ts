/**
 * Sub-wallet routes (Treasury-scoped bearer): create, list, read, balance, payments, the signer's policy receipt,
 * rotate, revoke. A wallet of another
 * account is indistinguishable from a missing one (404); a revoked wallet answers 410 on every route.
 *
 * Defends: one account crowding the signer every tenant shares with policy receipts (each an HSM/KMS signature) by
 * spreading them over many wallets and bearers — they count in the `receipt` bucket per account
 * (../auth/wallet-tenant.ts), before the signer is asked. Does not defend: one wallet's receipts against its payments (the
 * signer's own receipt ceilings do: signer/owner-policy/policy-receipts.ts).
 */
import Router from '@koa/router';
import { queryOf } from '../http/request-query.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import { walletIdSchema } from '../http/schemas/common-schemas.js';
import { createWalletBodySchema, keyRetirementBodySchema, listWalletsQuerySchema } from './wallet-schemas.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import type { PaymentHistoryService } from './payment-history-service.js';
import { validate } from '../http/validate.js';
import { walletBearer, type WalletRouteDeps } from './wallet-bearer.js';
import { policyReceiptQuerySchema } from './policy-receipt.js';
import type { WalletBalance } from '../../shared/api-responses/wallet-responses.js';
import type { RateLimits } from '../http/middleware/rate-limit.js';
import { walletTenant } from '../auth/wallet-tenant.js';

export function walletRoutes(
  deps: WalletRouteDeps & {
    chains: ChainRegistry;
    balances: BalanceReader;
    history: PaymentHistoryService;
    /** Counts the policy receipts (bucket `receipt`, per account). */
    rateLimits: Pick<RateLimits, 'consume'>;
  },
): Router {
  const router = new Router();
  /** Treasury bearers manage wallets; an agent PAT (or a session exchanged from one) may only read its agent's wallets (`read`). */
  const accountOf = async (header: string, read = false) => {
    const { principal, accountId } = await walletBearer(deps, header, read);
    return { accountId, actor: principal.actor, tenant: walletTenant(principal, accountId) };
  };

  router.post('/v1/wallets', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const body = validate(createWalletBodySchema, ctx.state.body);
    ctx.status = 201;
    ctx.body = await deps.wallets.create(accountId, body, actor);
  });

  router.get('/v1/wallets', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const query = validate(listWalletsQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.wallets.list(accountId, query);
  });

  router.get('/v1/wallets/:id', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    ctx.body = deps.wallets.toView(await deps.wallets.getActive(accountId, walletId));
  });

  /** USDC on the wallet's chain, read on-chain every call; `stale: true` with the last figure while the RPC is down. */
  router.get('/v1/wallets/:id/balance', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    const wallet = await deps.wallets.getActive(accountId, walletId);
    const chain = deps.chains.resolveAny(wallet.network);
    if (!chain) throw new AppError('network_not_supported', { fields: { network: wallet.network } });
    ctx.set('Cache-Control', 'no-store');
    const balance: WalletBalance = {
      wallet_id: wallet.id,
      ...(await deps.balances.usdcBalance(accountId, chain, wallet.address)),
    };
    ctx.body = balance;
  });

  /** The wallet's payments, newest first (docs/api.md, "Payment history"); another account's wallet is a 404. */
  router.get('/v1/wallets/:id/payments', async (ctx) => {
    const { accountId } = await accountOf(ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    const page = validate(pageQuerySchema, queryOf(ctx), 'query');
    const wallet = await deps.wallets.getActive(accountId, walletId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.history.forWallet(wallet.id, page);
  });

  /**
   * The signer's receipt of the wallet's policy, signed by the wallet's key around the caller's nonce
   * (./policy-receipt.ts); never cached. Counted in the bearer's `token` bucket as the routes beside it, in the
   * account's `receipt` bucket before the signer is asked, and in the signer in the wallet's own receipt ceilings
   * (never in those its payments count in).
   */
  router.get('/v1/wallets/:id/policy/receipt', async (ctx) => {
    const { accountId, tenant } = await accountOf(ctx.get('authorization'), true);
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    // 404 / 410 for the wallet before its query is read, as on every route of a wallet.
    const wallet = await deps.wallets.getActive(accountId, walletId);
    const { nonce } = validate(policyReceiptQuerySchema, queryOf(ctx), 'query');
    await deps.rateLimits.consume('receipt', tenant);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.wallets.policyReceipt(wallet, nonce);
  });

  router.post('/v1/wallets/:id/rotate', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    const body = validate(keyRetirementBodySchema.optional(), ctx.state.body);
    ctx.body = await deps.wallets.rotate(accountId, walletId, actor, body?.abandon_balance === true);
  });

  router.post('/v1/wallets/:id/revoke', async (ctx) => {
    const { accountId, actor } = await accountOf(ctx.get('authorization'));
    const walletId = validate(walletIdSchema, ctx.params.id, 'path');
    const body = validate(keyRetirementBodySchema.optional(), ctx.state.body);
    ctx.body = await deps.wallets.revoke(accountId, walletId, actor, body?.abandon_balance === true);
  });

  return router;
}

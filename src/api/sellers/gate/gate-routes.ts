/**
 * The gate's routes (docs/gate.md), all taking a PAT with the gate scope (`requireGateScope`) and all scoped to
 * that PAT's account:
 *   GET  /v1/gate/catalogue     the account's managed-proxy (`mpp`) sellers, their origin, pay-to and endpoints
 *                               (`?network=`: a platform_mor seller's pay-to is its collection wallet there);
 *   POST /v1/gate/ledger        one ledger row of a paid request the gate settled;
 *   POST /v1/gate/ledger/batch  up to 100 rows, each with its own outcome (as /v1/ledger/batch).
 * A gate row must name its endpoint (`endpoint_id`): the row is the endpoint's seller's, stored as that seller's
 * middleware report would be (src/api/sellers/ledger/seller-ledger-service.ts).
 *
 * Defends: a gate reading or reporting for another account's sellers, or for a seller that did not choose the
 * managed proxy (`endpoint_not_found`, the same answer as an endpoint that does not exist); a service, agent or
 * Treasury PAT without the gate scope reaching these routes (403), and a gate-only PAT reaching any other route
 * (they check scope_type, which is `gate`). Does not defend: a false row of the right shape — the ledger
 * verifies every row on chain before it counts.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import type { Knex } from 'knex';
import { getAddress } from 'viem';
import { requireGateScope, type Authenticator } from '../../auth/authenticator.js';
import { AppError } from '../../errors/app-error.js';
import type { SellerLedgerService } from '../ledger/seller-ledger-service.js';
import { reportLedgerBatch } from '../ledger/ledger-batch.js';
import type { LedgerPendingCap } from '../ledger/ledger-pending-cap.js';
import { endpointTerms, type EndpointRow, type SellerRow } from '../seller-views.js';
import {
  ledgerBatchBodySchema,
  ledgerReportBodySchema,
  type LedgerReportBody,
} from '../../../shared/ledger-report-schema.js';
import {
  MAX_GATE_ENDPOINTS,
  MAX_GATE_SELLERS,
  type GateCatalogue,
} from '../../../shared/api-responses/gate-responses.js';
import { platformRouter } from '../../http/routes/platform-principal.js';
import type { PlatformWallets } from '../payouts/platform-wallets.js';
import { catalogueQuerySchema } from '../seller-schemas.js';
import { validate } from '../../http/validate.js';

export function gateRoutes(deps: {
  auth: Authenticator;
  knex: Knex;
  ledger: SellerLedgerService;
  pendingCap: Pick<LedgerPendingCap, 'admit'>;
  collections: Pick<PlatformWallets, 'payToFor'>;
  /** CAIP-2 network of the API's default chain. */
  defaultNetwork: string;
}): Router {
  const { router, principalOf } = platformRouter(deps.auth);
  const accountOf = async (ctx: Context) => requireGateScope(await principalOf(ctx));

  /** The `mpp` seller of `accountId` that owns the row's endpoint; `endpoint_not_found` for any other. */
  async function sellerOfRow(accountId: string, row: LedgerReportBody): Promise<SellerRow> {
    if (!row.endpoint_id)
      throw new AppError('invalid_request', { message: 'A gate ledger row must name its endpoint_id.' });
    const seller = (await deps
      .knex('endpoints as e')
      .join('sellers as s', 's.id', 'e.seller_id')
      .where({ 'e.id': row.endpoint_id, 's.account_id': accountId, 's.protocol': 'mpp' })
      .first('s.*')) as SellerRow | undefined;
    if (!seller) throw new AppError('endpoint_not_found');
    return seller;
  }

  router.get('/v1/gate/catalogue', async (ctx) => {
    const accountId = await accountOf(ctx);
    const sellers = (await deps
      .knex('sellers')
      .where({ account_id: accountId, protocol: 'mpp' })
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(MAX_GATE_SELLERS)) as SellerRow[];
    const ids = sellers.map((s) => s.id);
    const endpoints = ids.length
      ? ((await deps
          .knex('endpoints')
          .whereIn('seller_id', ids)
          .orderBy([{ column: 'created_at' }, { column: 'id' }])
          .limit(MAX_GATE_ENDPOINTS)) as EndpointRow[])
      : [];
    const payTo = ids.length
      ? ((await deps
          .knex('sellers_pay_to')
          .whereIn('seller_id', ids)
          .orderBy([{ column: 'created_at' }, { column: 'address' }])
          .select('seller_id', 'address')) as Array<{ seller_id: string; address: string }>)
      : [];
    const firstPayTo = new Map<string, string>();
    for (const p of payTo) if (!firstPayTo.has(p.seller_id)) firstPayTo.set(p.seller_id, getAddress(p.address.trim()));
    // A platform_mor seller's buyers pay its collection wallet on the gate's network (created on first use).
    const { network } = validate(catalogueQuerySchema, ctx.query, 'query');
    const collectTo = new Map<string, string | null>();
    for (const s of sellers)
      if (s.payout_mode === 'platform_mor')
        collectTo.set(s.id, await deps.collections.payToFor(s, network ?? deps.defaultNetwork));
    const catalogue: GateCatalogue = {
      account_id: accountId,
      sellers: sellers.map((s) => ({
        seller_id: s.id,
        slug: s.slug,
        status: s.status,
        origin: s.origin,
        origin_verified: s.origin !== null && s.verified_at !== null,
        pay_to: collectTo.has(s.id) ? (collectTo.get(s.id) ?? null) : (firstPayTo.get(s.id) ?? null),
        endpoints: endpoints.filter((e) => e.seller_id === s.id).map(endpointTerms),
      })),
    };
    ctx.set('Cache-Control', 'no-store');
    ctx.body = catalogue;
  });

  router.post('/v1/gate/ledger', async (ctx) => {
    const accountId = await accountOf(ctx);
    const body = validate(ledgerReportBodySchema, ctx.state.body);
    const seller = await sellerOfRow(accountId, body);
    await deps.pendingCap.admit([{ seller, row: body }]);
    const result = await deps.ledger.report(seller, body);
    ctx.status = result.created ? 201 : 200;
    ctx.body = { ...result.entry, duplicate: !result.created };
  });

  router.post('/v1/gate/ledger/batch', async (ctx) => {
    const accountId = await accountOf(ctx);
    const body = validate(ledgerBatchBodySchema, ctx.state.body);
    ctx.body = {
      results: await reportLedgerBatch(deps.ledger, deps.pendingCap, body.rows, (row) => sellerOfRow(accountId, row)),
    };
  });

  return router;
}

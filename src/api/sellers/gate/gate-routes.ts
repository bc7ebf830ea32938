/**
 * The gate's routes (docs/gate.md), all taking a PAT with the gate scope (`requireGateScope`) and all scoped to
 * that PAT's account:
 *   GET  /v1/gate/catalogue     the account's managed-proxy (`mpp`) sellers, their origin, pay-to and endpoints
 *                               (`?network=`: a platform_mor seller's pay-to is its collection wallet there);
 *   POST /v1/gate/ledger        one ledger row of a paid request the gate settled;
 *   POST /v1/gate/ledger/batch  up to 100 rows, each with its own outcome (as /v1/ledger/batch).
 * A gate row must name its endpoint (`endpoint_id`): the row is the endpoint's seller's, stored as that seller's
 * middleware report would be (./gate-service.ts, src/api/sellers/ledger/seller-ledger-service.ts).
 *
 * Defends: a gate reading or reporting for another account's sellers, or for a seller that did not choose the
 * managed proxy (`endpoint_not_found`, the same answer as an endpoint that does not exist); a service, agent or
 * Treasury PAT without the gate scope reaching these routes (403), and a gate-only PAT reaching any other route
 * (they check scope_type, which is `gate`). Does not defend: a false row of the right shape — the ledger
 * verifies every row on chain before it counts.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { queryOf } from '../../http/request-query.js';
import { requireGateScope, type Authenticator } from '../../auth/authenticator.js';
import { ledgerBatchBodySchema, ledgerReportBodySchema } from '../../../shared/ledger-report-schema.js';
import { platformRouter } from '../../platform/platform-principal.js';
import { catalogueQuerySchema } from '../seller-schemas.js';
import { validate } from '../../http/validate.js';
import type { GateService } from './gate-service.js';

export function gateRoutes(deps: { auth: Authenticator; gate: GateService }): Router {
  const { router, principalOf } = platformRouter(deps.auth);
  const accountOf = async (ctx: Context) => requireGateScope(await principalOf(ctx));

  router.get('/v1/gate/catalogue', async (ctx) => {
    const accountId = await accountOf(ctx);
    const { network } = validate(catalogueQuerySchema, queryOf(ctx), 'query');
    ctx.body = await deps.gate.catalogue(accountId, network);
    ctx.set('Cache-Control', 'no-store');
  });

  router.post('/v1/gate/ledger', async (ctx) => {
    const accountId = await accountOf(ctx);
    const result = await deps.gate.report(accountId, validate(ledgerReportBodySchema, ctx.state.body));
    ctx.status = result.created ? 201 : 200;
    ctx.body = { ...result.entry, duplicate: !result.created };
  });

  router.post('/v1/gate/ledger/batch', async (ctx) => {
    const accountId = await accountOf(ctx);
    const body = validate(ledgerBatchBodySchema, ctx.state.body);
    ctx.body = { results: await deps.gate.reportBatch(accountId, body.rows) };
  });

  return router;
}

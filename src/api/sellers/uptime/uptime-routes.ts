/**
 * `POST /v1/gate/uptime` (docs/gate.md#uptime): a gate's hourly counts of what its sellers' origins answered,
 * taking only a PAT with the gate scope, scoped to that PAT's account (./uptime-service.ts).
 *
 * Defends: a PAT without the gate scope reporting (403); a malformed or unbounded report (400, the shared
 * schema). Does not defend: false counts (the gate is the seller's own process).
 */
import Router from '@koa/router';
import { requireGateScope, type Authenticator } from '../../auth/authenticator.js';
import { validate } from '../../http/validate.js';
import { platformRouter } from '../../platform/platform-principal.js';
import { uptimeReportBodySchema } from '../../../shared/uptime-report-schema.js';
import type { UptimeService } from './uptime-service.js';

export function uptimeRoutes(deps: { auth: Authenticator; uptime: UptimeService }): Router {
  const { router, principalOf } = platformRouter(deps.auth);

  router.post('/v1/gate/uptime', async (ctx) => {
    const accountId = requireGateScope(await principalOf(ctx));
    const body = validate(uptimeReportBodySchema, ctx.state.body);
    ctx.body = await deps.uptime.report(accountId, body.buckets);
  });

  return router;
}

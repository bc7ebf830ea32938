/**
 * Liveness (/livez, /health), readiness (/readyz: database and signer) and Prometheus /metrics. Not ready is
 * 503 with `error_code: "not_ready"` (and its user_message) beside which part is down. With TREASURY_METRICS_PORT
 * /metrics has a listener of its own (src/api/main.ts) and no route here (`metricsHere: false`): the API's port
 * answers it 404 `not_found`, as any path it does not serve, so every tenant's counts are not readable there.
 *
 * Defends: /readyz as an amplifier — it is public and asks PostgreSQL and the signer (its HSM session) each
 * time, so the requests that arrive while a check is in flight share that check and its answer: however many
 * ask at once, the signer and the database see one check at a time from this process. Does not defend: one
 * check after another from a client that waits for each answer (each is a round trip to both; a deployment's
 * proxy may keep /readyz to its load balancer, as compose.yaml's does /metrics).
 */
import Router from '@koa/router';
import type { Knex } from 'knex';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import type { SignerGateway } from '../../signing/signer-gateway.js';
import { ERROR_CODES } from '../../../shared/error-codes.js';
import type { CatalogEntry } from '../openapi/catalog-entry.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';
import type { Liveness, Readiness } from '../../../shared/api-responses/ops-responses.js';

export function opsRoutes(deps: {
  knex: Knex;
  signer: SignerGateway;
  metrics: TreasuryMetrics;
  isShuttingDown: () => boolean;
  publicUrl: string;
  /** Every route's catalogue entry (src/api/api-catalog.ts): the source of GET /v1/openapi.json. */
  catalog: readonly CatalogEntry[];
  /** false: /metrics is served on a listener of its own (TREASURY_METRICS_PORT), not by this app. */
  metricsHere?: boolean;
}): Router {
  const router = new Router();
  let openapi: unknown;
  router.get('/v1/openapi.json', (ctx) => {
    openapi ??= buildOpenApiDocument(deps.publicUrl, deps.catalog);
    ctx.body = openapi;
  });
  const live = (ctx: { body: unknown }) => {
    ctx.body = { status: 'ok' } satisfies Liveness;
  };
  router.get('/livez', live);
  router.get('/health', live);
  let checking: Promise<[boolean, boolean]> | undefined;
  const check = () =>
    (checking ??= Promise.all([
      deps.knex.raw('SELECT 1').then(
        () => true,
        () => false,
      ),
      deps.signer.healthy(),
    ]).finally(() => {
      checking = undefined;
    }));
  router.get('/readyz', async (ctx) => {
    const [db, signer] = await check();
    const ready = db && signer && !deps.isShuttingDown();
    ctx.status = ready ? 200 : 503;
    const state = { database: db, signer, shutting_down: deps.isShuttingDown() };
    ctx.body = (
      ready
        ? { status: 'ready', ...state }
        : { error_code: 'not_ready', user_message: ERROR_CODES.not_ready.message, status: 'not_ready', ...state }
    ) satisfies Readiness;
  });
  if (deps.metricsHere !== false)
    router.get('/metrics', async (ctx) => {
      ctx.type = deps.metrics.registry.contentType;
      ctx.body = await deps.metrics.registry.metrics();
    });
  return router;
}

/**
 * Agent routes: GET/POST /v1/agents (the owner's sign-in session; the list is paged with `limit` and
 * `cursor`), GET /v1/agents/{id} and POST /v1/agents/{id}/wallets (the owning account's sign-in session, or
 * that agent's own PAT or a session exchanged from it, which act as that agent only), GET
 * /v1/agents/{id}/payments (the same callers: the payments of every wallet of the agent). Another account's
 * agent is a 404.
 */
import Router from '@koa/router';
import { queryOf } from '../http/request-query.js';
import { agentBinding, type Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/principal.js';
import { requireSession } from '../auth/session-powers.js';
import { AppError } from '../errors/app-error.js';
import type { AgentService } from './agent-service.js';
import { agentIdSchema } from '../http/schemas/common-schemas.js';
import { agentWalletBodySchema, spawnAgentBodySchema } from './agent-schemas.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import type { PaymentPage } from '../../shared/api-responses/payment-history-responses.js';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';
import { platformRouter } from './platform-principal.js';
import { bodyOrEmpty, validate } from '../http/validate.js';

/**
 * The agent a bearer acts as (agent PAT, exchanged session) with that PAT's daily cap, else the owner's
 * account (sign-in session).
 */
function callerOf(p: Principal): { accountId?: string; agentId?: string; patDailyCapMicro?: bigint | null } {
  const binding = agentBinding(p);
  if (binding) return { agentId: binding.agentId, patDailyCapMicro: binding.dailyCapMicro };
  if (p.kind === 'token' && p.tokenKind === 'session') return { accountId: requireSession(p, 'owner').accountId };
  throw new AppError('insufficient_scope', {
    message: "Agent routes take an account session (as_…) or the agent's own PAT.",
  });
}

/** The payments of every wallet of a Treasury account (the wallets wing answers; the platform only asks). */
export interface AgentPayments {
  forAccount(treasuryAccountId: string, page: PageRequest): Promise<PaymentPage>;
}

export function agentRoutes(deps: { auth: Authenticator; agents: AgentService; history: AgentPayments }): Router {
  const { router, principalOf } = platformRouter(deps.auth);

  router.get('/v1/agents', async (ctx) => {
    const { accountId } = requireSession(await principalOf(ctx), 'owner');
    ctx.body = await deps.agents.list(accountId, validate(pageQuerySchema, queryOf(ctx), 'query'));
  });
  router.post('/v1/agents', async (ctx) => {
    const { accountId, sessionId } = requireSession(await principalOf(ctx), 'owner');
    const body = validate(spawnAgentBodySchema, bodyOrEmpty(ctx.state.body));
    ctx.status = 201;
    ctx.body = await deps.agents.spawn(accountId, body.label, sessionId);
  });
  router.get('/v1/agents/:id', async (ctx) => {
    const caller = callerOf(await principalOf(ctx));
    ctx.body = await deps.agents.get(caller, validate(agentIdSchema, ctx.params.id, 'path'));
  });
  /** The payments of every wallet of the agent, newest first (docs/api.md, "Payment history"). */
  router.get('/v1/agents/:id/payments', async (ctx) => {
    const caller = callerOf(await principalOf(ctx));
    const agent = await deps.agents.load(caller, validate(agentIdSchema, ctx.params.id, 'path'));
    const page = validate(pageQuerySchema, queryOf(ctx), 'query');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.history.forAccount(agent.treasury_account_id, page);
  });
  router.post('/v1/agents/:id/wallets', async (ctx) => {
    const p = await principalOf(ctx);
    const caller = callerOf(p);
    const agentId = validate(agentIdSchema, ctx.params.id, 'path');
    const { network, ...body } = validate(agentWalletBodySchema, bodyOrEmpty(ctx.state.body));
    if (network && body.chain && network !== body.chain)
      throw new AppError('invalid_request', { message: 'Give chain or network, not two different ones.' });
    ctx.status = 201;
    ctx.body = await deps.agents.addWallet(caller, agentId, { ...body, chain: body.chain ?? network }, p.actor);
  });
  return router;
}

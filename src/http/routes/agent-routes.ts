/**
 * Agent routes: GET/POST /v1/agents (account session; the list is paged with `limit` and `cursor`),
 * GET /v1/agents/{id} and POST /v1/agents/{id}/wallets (the owning account's session, or that agent's own
 * PAT). Another account's agent is a 404.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { requireSessionAccount, type Authenticator, type Principal } from '../../auth/authenticator.js';
import { AppError } from '../../errors/app-error.js';
import type { AgentService } from '../../services/agent-service.js';
import { agentIdSchema, plainText } from '../schemas/common-schemas.js';
import { pageQuerySchema } from '../schemas/page-query-schema.js';
import { createWalletBodySchema } from '../schemas/wallet-schemas.js';
import { validate } from '../validate.js';

const spawnAgentBodySchema = z.object({ label: plainText(128).optional() }).strict();
/** Like POST /v1/wallets; `network` (CAIP-2) is accepted as another spelling of `chain`. */
const agentWalletBodySchema = createWalletBodySchema.extend({ network: z.string().regex(/^eip155:[1-9][0-9]{0,15}$/).optional() }).strict();

function callerOf(p: Principal): { accountId?: string; agentId?: string } {
  if (p.kind === 'token' && p.tokenKind === 'session' && p.accountId) return { accountId: p.accountId };
  if (p.kind === 'token' && p.tokenKind === 'pat' && p.scopeType === 'agent') return { agentId: p.scopeId };
  throw new AppError('insufficient_scope', { message: 'Agent routes take an account session (as_…) or the agent\'s own PAT.' });
}

export function agentRoutes(deps: { auth: Authenticator; agents: AgentService }): Router {
  const router = new Router();
  const principalOf = (ctx: Context) => deps.auth.authenticate(ctx.get('authorization'), new Date(), { platform: true });

  router.get('/v1/agents', async (ctx) => {
    const accountId = requireSessionAccount(await principalOf(ctx));
    ctx.body = await deps.agents.list(accountId, validate(pageQuerySchema, ctx.query, 'query'));
  });
  router.post('/v1/agents', async (ctx) => {
    const accountId = requireSessionAccount(await principalOf(ctx));
    const body = validate(spawnAgentBodySchema, ctx.state.body ?? {});
    ctx.status = 201;
    ctx.body = await deps.agents.spawn(accountId, body.label);
  });
  router.get('/v1/agents/:id', async (ctx) => {
    const caller = callerOf(await principalOf(ctx));
    ctx.body = await deps.agents.get(caller, validate(agentIdSchema, ctx.params.id, 'path'));
  });
  router.post('/v1/agents/:id/wallets', async (ctx) => {
    const p = await principalOf(ctx);
    const caller = callerOf(p);
    const agentId = validate(agentIdSchema, ctx.params.id, 'path');
    const { network, ...body } = validate(agentWalletBodySchema, ctx.state.body ?? {});
    if (network && body.chain && network !== body.chain) throw new AppError('invalid_request', { message: 'Give chain or network, not two different ones.' });
    ctx.status = 201;
    ctx.body = await deps.agents.addWallet(caller, agentId, { ...body, chain: body.chain ?? network }, p.actor);
  });
  return router;
}

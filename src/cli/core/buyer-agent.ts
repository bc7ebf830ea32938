/**
 * The agent a buyer bearer (./buyer-bearer.ts) acts as, and a client bearing it: the local agent record's id
 * when the bearer is that record's PAT, else the server's answer to `GET /v1/auth/whoami` (a headless machine
 * with only `XX_PAT`, or a profile made by `xx login`). Defends against a bearer of another kind (a
 * Treasury or service PAT) being used as an agent's: `not_an_agent_bearer`, exit 1, before anything else.
 */
import type { ApiClient } from './api-client.js';
import type { BuyerBearer } from './buyer-bearer.js';
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';
import { whoamiSchema } from '../../shared/api-responses/identity-responses.js';

export async function agentOfBearer(
  ctx: CliContext,
  bearer: BuyerBearer,
): Promise<{ client: ApiClient; agentId: string }> {
  const client = ctx.client(bearer.token, bearer.server);
  if (bearer.agent) return { client, agentId: bearer.agent.agent_id };
  const who = await client.request('GET', '/v1/auth/whoami', { reply: whoamiSchema });
  const agentId = who.scope_type === 'agent' ? who.scope_id : 'agent_id' in who ? who.agent_id : undefined;
  if (!agentId)
    throw new CliError({
      code: 'not_an_agent_bearer',
      userMessage: `The credential in use is a ${who.scope_type} bearer, not an agent PAT; buyer commands need an agent PAT.`,
      details: { scope_type: who.scope_type },
    });
  return { client, agentId };
}

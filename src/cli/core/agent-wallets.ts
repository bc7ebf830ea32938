/**
 * An agent's active managed wallets, all of them: `GET /v1/agents/{id}` carries the first 100 and
 * `wallets_next_cursor`, which `GET /v1/wallets?status=active` continues (the agent's PAT reads its own
 * account's wallets there). Without this a command showed, and stored, at most 100.
 * Each wallet comes with its `policy_state` (owner-signed, or the signer's ceilings only) when the server
 * says it; the agent's record keeps none of it (agentRecordSchema drops the field on save).
 * Defends against what ./read-every-page.ts does (a repeating cursor, a page without its list); the
 * agent's answer itself is checked against its schema.
 */
import { z } from 'zod';
import type { ApiClient } from './api-client.js';
import { policyStateSchema } from '../../shared/api-responses/wallet-responses.js';
import { managedWalletSchema } from './cli-state.js';
import { CliError } from './cli-error.js';
import { readEveryPage } from './read-every-page.js';

/** A wallet as listed: the stored fields and, from a server that says it, whether its policy is owner-signed. */
const listedWalletSchema = managedWalletSchema.extend({ policy_state: policyStateSchema.optional() });
export type ListedWallet = z.infer<typeof listedWalletSchema>;

const agentViewSchema = z.object({
  agent_id: z.string(),
  label: z.string().nullable().optional(),
  wallets: z.array(listedWalletSchema),
  wallets_next_cursor: z.string().min(1).nullable().optional(),
});

export async function agentWithEveryWallet(
  client: ApiClient,
  agentId: string,
): Promise<{ agent_id: string; label: string | null; wallets: ListedWallet[] }> {
  const route = `GET /v1/agents/${agentId}`;
  const parsed = agentViewSchema.safeParse(await client.request('GET', `/v1/agents/${agentId}`));
  if (!parsed.success)
    throw new CliError({ code: 'invalid_reply', userMessage: `${route} answered an unexpected agent.` });
  const first = { wallets: parsed.data.wallets, next_cursor: parsed.data.wallets_next_cursor ?? null };
  const { wallets } = await readEveryPage(client, '/v1/wallets', 'wallets', { first, query: { status: 'active' } });
  const every = z.array(listedWalletSchema).safeParse(wallets);
  if (!every.success)
    throw new CliError({ code: 'invalid_reply', userMessage: 'GET /v1/wallets answered an unexpected wallet.' });
  return { agent_id: parsed.data.agent_id, label: parsed.data.label ?? null, wallets: every.data };
}

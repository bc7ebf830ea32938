/**
 * Agents of an account: each has its own Treasury account, so its wallets and spend are separate from
 * its siblings'. The account session manages them; an agent's own PAT may read itself and add wallets to
 * its own Treasury account (never set their policy — that stays with the account owner). A wallet an agent
 * bearer adds gets a default policy no looser than its PAT's daily cap (src/api/services/wallet-bounds.ts).
 *
 * The account's list is paged like the wallet list, and a page's agents get their wallets from one query
 * for the whole page (`WalletService.firstActivePages`), not one per agent. Each agent in it carries what
 * `GET /v1/agents/{id}` shows: its first 100 active wallets and where they continue. Not bounded: the
 * answer's size, up to 500 agents × 100 wallets on the largest page.
 */
import type { Knex } from 'knex';
import type { PageRequest } from '../db/keyset-cursor.js';
import { readAccountPage } from './account-page.js';
import { AppError } from '../errors/app-error.js';
import type { IdentityService } from '../identity/identity-service.js';
import type { WalletService } from '../services/wallet-service.js';
import type { WalletBoundsConfig } from '../config/app-config.js';
import { defaultAgentWalletPolicy } from '../services/wallet-bounds.js';
import type { AgentPage, AgentView, WalletView } from '../../shared/api-responses/wallet-responses.js';

/** The id shape of agents, which the agent list's page cursors name. */
const AGENT_ID = /^agt_[0-9a-f]{24}$/;
/** Active wallets shown with each agent; `wallets_next_cursor` continues them. */
const AGENT_WALLETS = 100;

interface AgentRow {
  id: string;
  account_id: string;
  label: string | null;
  treasury_account_id: string;
  created_at: Date;
}

export class AgentService {
  constructor(
    private readonly knex: Knex,
    private readonly identity: IdentityService,
    private readonly wallets: WalletService,
    private readonly clock: () => Date,
    private readonly bounds: WalletBoundsConfig,
  ) {}

  /** The views of agents, their wallets read in one query for all of them. */
  private async views(rows: readonly AgentRow[]): Promise<AgentView[]> {
    const wallets = await this.wallets.firstActivePages(
      rows.map((r) => r.treasury_account_id),
      AGENT_WALLETS,
    );
    return rows.map((row) => {
      const page = wallets.get(row.treasury_account_id)!;
      return {
        agent_id: row.id,
        label: row.label,
        treasury_account_id: row.treasury_account_id,
        created_at: row.created_at.toISOString(),
        wallets: page.wallets,
        wallets_next_cursor: page.next_cursor,
      };
    });
  }

  /** The agent, if the caller may see it: the owning account's session, or the agent's own PAT. */
  async load(
    caller: { accountId?: string | undefined; agentId?: string | undefined },
    agentId: string,
  ): Promise<AgentRow> {
    const row = (await this.knex<AgentRow>('agents').where({ id: agentId }).first()) as AgentRow | undefined;
    const allowed =
      row && ((caller.accountId !== undefined && row.account_id === caller.accountId) || caller.agentId === row.id);
    if (!row || !allowed) throw new AppError('agent_not_found');
    return row;
  }

  /** A page of the account's agents, oldest first, each with its wallets; `next_cursor` (null on the last page) asks for the next. */
  async list(accountId: string, request: PageRequest): Promise<AgentPage> {
    const { page, nextCursor } = await readAccountPage<AgentRow>(this.knex, 'agents', accountId, request, AGENT_ID);
    return { agents: await this.views(page), next_cursor: nextCursor };
  }

  async get(
    caller: { accountId?: string | undefined; agentId?: string | undefined },
    agentId: string,
  ): Promise<AgentView> {
    const [view] = await this.views([await this.load(caller, agentId)]);
    return view!;
  }

  async spawn(accountId: string, label: string | undefined): Promise<AgentView> {
    const now = this.clock();
    const agentId = await this.knex.transaction((trx) =>
      this.identity.spawnAgent(trx, accountId, label ?? 'agent', now),
    );
    return this.get({ accountId }, agentId);
  }

  /**
   * A wallet for the agent. The owner's session may give its policy; an agent bearer may not, and its wallet
   * gets `defaultAgentWalletPolicy` from the daily cap of the PAT it acts with (`patDailyCapMicro`).
   */
  async addWallet(
    caller: { accountId?: string | undefined; agentId?: string | undefined; patDailyCapMicro?: bigint | null },
    agentId: string,
    input: { label?: string | undefined; chain?: string | undefined; policy?: Record<string, unknown> | undefined },
    actor: string,
  ): Promise<WalletView> {
    const agent = await this.load(caller, agentId);
    const byOwner = caller.accountId === agent.account_id;
    if (input.policy !== undefined && !byOwner) {
      throw new AppError('insufficient_scope', { message: 'Only the account owner (session) sets a wallet policy.' });
    }
    const defaultPolicy = byOwner ? undefined : defaultAgentWalletPolicy(caller.patDailyCapMicro ?? null, this.bounds);
    return this.wallets.create(agent.treasury_account_id, input as Parameters<WalletService['create']>[1], actor, {
      defaultPolicy,
    });
  }
}

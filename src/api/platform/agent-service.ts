/**
 * Agents of an account: each has its own Treasury account, so its wallets and spend are separate from
 * its siblings'. The account session manages them; an agent's own PAT may read itself and add wallets to
 * its own Treasury account (never set their policy — that stays with the account owner). A wallet an agent
 * bearer adds gets a default policy no looser than its PAT's daily cap (the wallets wing decides it, through
 * the port ./agent-wallets.ts: the platform never imports the wallets wing).
 *
 * The account's list is paged like the wallet list, and a page's agents get their wallets from one query
 * for the whole page (`AgentWallets.firstActivePages`), not one per agent. Each agent in it carries what
 * `GET /v1/agents/{id}` shows: its first 100 active wallets and where they continue. Not bounded: the
 * answer's size, up to 500 agents × 100 wallets on the largest page.
 *
 * An account holds at most TREASURY_MAX_AGENTS_PER_ACCOUNT agents, whatever made them (./agent-bounds.ts: 409
 * `agent_limit_reached`, counted under the account's lock before the HSM is asked for the agent's key).
 */
import type { PageRequest } from '../db/keyset-cursor.js';
import type { StoreUnit } from '../db/store-unit.js';
import { AppError } from '../errors/app-error.js';
import type { AccountService } from './account-service.js';
import { refuseOverAgentBound } from './agent-bounds.js';
import type { AgentWalletInput, AgentWallets } from './agent-wallets.js';
import type { AgentRow, AgentStore } from './store/platform-stores.js';
import { generateId } from '../auth/token-codec.js';
import type { AuthorityRequest } from '../../../signer/protocol/signer-protocol.js';
import { signInAuthority } from './sign-in-authority.js';
import type { AgentPage, AgentView, WalletView } from '../../shared/api-responses/wallet-responses.js';

export type { AgentRow } from './store/platform-stores.js';

export interface AgentServiceDeps {
  store: AgentStore;
  /** Each agent's own Treasury account. */
  accounts: Pick<AccountService, 'create'>;
  wallets: AgentWallets;
  clock: () => Date;
  /** TREASURY_MAX_AGENTS_PER_ACCOUNT: the account's agents at most (./agent-bounds.ts). */
  maxAgents: number;
}

/** Active wallets shown with each agent; `wallets_next_cursor` continues them. */
const AGENT_WALLETS = 100;

export class AgentService {
  constructor(private readonly deps: AgentServiceDeps) {}

  /** The views of agents, their wallets read in one query for all of them. */
  private async views(rows: readonly AgentRow[]): Promise<AgentView[]> {
    const wallets = await this.deps.wallets.firstActivePages(
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
    const row = await this.deps.store.get(agentId);
    const allowed =
      row && ((caller.accountId !== undefined && row.account_id === caller.accountId) || caller.agentId === row.id);
    if (!row || !allowed) throw new AppError('agent_not_found');
    return row;
  }

  /** A page of the account's agents, oldest first, each with its wallets; `next_cursor` (null on the last page) asks for the next. */
  async list(accountId: string, request: PageRequest): Promise<AgentPage> {
    const { page, nextCursor } = await this.deps.store.page(accountId, request);
    return { agents: await this.views(page), next_cursor: nextCursor };
  }

  async get(
    caller: { accountId?: string | undefined; agentId?: string | undefined },
    agentId: string,
  ): Promise<AgentView> {
    const [view] = await this.views([await this.load(caller, agentId)]);
    return view!;
  }

  /**
   * A new agent made by the owner's sign-in session `sessionId`: its Treasury account's policy authority is
   * the owner named by that session's own SIWE proof (./sign-in-authority.ts).
   */
  async spawn(accountId: string, label: string | undefined, sessionId: string): Promise<AgentView> {
    const now = this.deps.clock();
    const authority = signInAuthority(await this.deps.store.signInProofOf(sessionId));
    const agentId = await this.deps.store.inUnit((unit) =>
      this.spawnIn(unit, accountId, { label: label ?? 'agent', authority }, now),
    );
    return this.get({ accountId }, agentId);
  }

  /**
   * A new agent with its own Treasury account (its key generated in the HSM, under `authority`), written in `unit`;
   * refused before any key is made when the account already holds as many agents as it may.
   */
  async spawnIn(
    unit: StoreUnit,
    accountId: string,
    agent: { label: string; authority: AuthorityRequest },
    now: Date,
  ): Promise<string> {
    const { label, authority } = agent;
    const limit = this.deps.maxAgents;
    refuseOverAgentBound(await this.deps.store.lockAgentCount(unit, accountId, limit), limit);
    const agentId = generateId('agt_');
    const treasury = await this.deps.accounts.create(
      { owner_type: 'agent', owner_id: agentId },
      accountId,
      authority,
      unit,
      accountId,
    );
    await this.deps.store.insert(unit, {
      id: agentId,
      account_id: accountId,
      label,
      treasury_account_id: treasury.id,
      created_at: now,
    });
    return agentId;
  }

  /** The account's first (oldest) agent, read in `unit`. */
  firstOf(unit: StoreUnit, accountId: string): Promise<string> {
    return this.deps.store.firstOf(unit, accountId);
  }

  /**
   * A wallet for the agent. The owner's session may give its policy; an agent bearer may not, and its wallet
   * gets `defaultAgentWalletPolicy` from the daily cap of the PAT it acts with (`patDailyCapMicro`).
   */
  async addWallet(
    caller: { accountId?: string | undefined; agentId?: string | undefined; patDailyCapMicro?: bigint | null },
    agentId: string,
    input: AgentWalletInput,
    actor: string,
  ): Promise<WalletView> {
    const agent = await this.load(caller, agentId);
    const byOwner = caller.accountId === agent.account_id;
    if (input.policy !== undefined && !byOwner) {
      throw new AppError('insufficient_scope', { message: 'Only the account owner (session) sets a wallet policy.' });
    }
    const agentBearer = byOwner ? null : { patDailyCapMicro: caller.patDailyCapMicro ?? null };
    return this.deps.wallets.createForAgent(agent.treasury_account_id, input, actor, agentBearer);
  }
}

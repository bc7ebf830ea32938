/**
 * Agents of an account: each has its own Treasury account, so its wallets and spend are separate from
 * its siblings'. The account session manages them; an agent's own PAT may read itself and add wallets to
 * its own Treasury account (never set their policy — that stays with the account owner).
 */
import type { Knex } from 'knex';
import { AppError } from '../errors/app-error.js';
import type { IdentityService } from '../identity/identity-service.js';
import type { WalletService, WalletView } from './wallet-service.js';

interface AgentRow {
  id: string;
  account_id: string;
  label: string | null;
  treasury_account_id: string;
  created_at: Date;
}

export interface AgentView {
  agent_id: string;
  label: string | null;
  treasury_account_id: string;
  created_at: string;
  /** The agent's first 100 active wallets, oldest first. */
  wallets: WalletView[];
  /** Where `GET /v1/wallets?status=active&cursor=…` continues when it has more (else null). */
  wallets_next_cursor: string | null;
}

export class AgentService {
  constructor(
    private readonly knex: Knex,
    private readonly identity: IdentityService,
    private readonly wallets: WalletService,
    private readonly clock: () => Date,
  ) {}

  private async view(row: AgentRow): Promise<AgentView> {
    const wallets = await this.wallets.list(row.treasury_account_id, { limit: 100, status: 'active' });
    return {
      agent_id: row.id,
      label: row.label,
      treasury_account_id: row.treasury_account_id,
      created_at: row.created_at.toISOString(),
      wallets: wallets.wallets,
      wallets_next_cursor: wallets.next_cursor,
    };
  }

  /** The agent, if the caller may see it: the owning account's session, or the agent's own PAT. */
  async load(caller: { accountId?: string | undefined; agentId?: string | undefined }, agentId: string): Promise<AgentRow> {
    const row = (await this.knex<AgentRow>('agents').where({ id: agentId }).first()) as AgentRow | undefined;
    const allowed = row && ((caller.accountId !== undefined && row.account_id === caller.accountId) || caller.agentId === row.id);
    if (!row || !allowed) throw new AppError('agent_not_found');
    return row;
  }

  async list(accountId: string): Promise<AgentView[]> {
    const rows = (await this.knex<AgentRow>('agents').where({ account_id: accountId }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as AgentRow[];
    return Promise.all(rows.map((r) => this.view(r)));
  }

  async get(caller: { accountId?: string | undefined; agentId?: string | undefined }, agentId: string): Promise<AgentView> {
    return this.view(await this.load(caller, agentId));
  }

  async spawn(accountId: string, label: string | undefined): Promise<AgentView> {
    const now = this.clock();
    const agentId = await this.knex.transaction((trx) => this.identity.spawnAgent(trx, accountId, label ?? 'agent', now));
    return this.get({ accountId }, agentId);
  }

  async addWallet(
    caller: { accountId?: string | undefined; agentId?: string | undefined },
    agentId: string,
    input: { label?: string | undefined; chain?: string | undefined; policy?: Record<string, unknown> | undefined },
    actor: string,
  ): Promise<WalletView> {
    const agent = await this.load(caller, agentId);
    if (input.policy !== undefined && caller.accountId !== agent.account_id) {
      throw new AppError('insufficient_scope', { message: 'Only the account owner (session) sets a wallet policy.' });
    }
    return this.wallets.create(agent.treasury_account_id, input as Parameters<WalletService['create']>[1], actor);
  }
}

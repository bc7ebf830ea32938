/**
 * In-memory fakes of the platform wing's stores (src/api/platform/store/platform-stores.ts), for unit tests
 * of its services without PostgreSQL: accounts, agents and PATs kept in maps, a unit of work that is only a
 * token (nothing is rolled back), and PAT lineage read from the rows the test put there (a parent is live
 * unless revoked or expired; its depth is its chain's length). Lists answer their first page only (a cursor
 * is ignored). Never imported by production code.
 */
import type { ParentCredential } from '../../src/api/auth/credential-lineage.js';
import { keysetPage, type PageRequest } from '../../src/api/db/keyset-cursor.js';
import type { StoreUnit } from '../../src/api/db/store-unit.js';
import { AppError } from '../../src/api/errors/app-error.js';
import type {
  AccountRow,
  AccountStore,
  AgentRow,
  AgentStore,
  NewCredential,
  NewPat,
  PatBound,
  PatRow,
  PatScope,
  PatStore,
} from '../../src/api/platform/store/platform-stores.js';

const UNIT = Symbol('fake unit') as unknown as StoreUnit;
const inUnit = <T>(work: (unit: StoreUnit) => Promise<T>): Promise<T> => work(UNIT);

function page<R extends { created_at: Date; id: string }>(rows: R[], request: PageRequest) {
  const sorted = [...rows].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1));
  return keysetPage(sorted.slice(0, request.limit + 1), request.limit);
}

/** A PAT row and the account it belongs to. */
export interface FakePat extends PatRow {
  account_id: string;
}

export class FakePatStore implements PatStore {
  readonly pats = new Map<string, FakePat>();
  readonly sellers: Array<{ id: string; account_id: string; created_at: Date }> = [];
  readonly agents: AgentRow[] = [];

  async sellerScope(accountId: string, sellerId: string | undefined) {
    return this.sellers.find((s) => s.account_id === accountId && (sellerId === undefined || s.id === sellerId))?.id;
  }

  async agentScope(accountId: string, by: 'agent' | 'treasury', scopeId: string | undefined) {
    const column = by === 'agent' ? 'id' : 'treasury_account_id';
    return this.agents.find((a) => a.account_id === accountId && (scopeId === undefined || a[column] === scopeId))?.[
      column
    ];
  }

  /** Holds PATs only: a session as parent is the PostgreSQL store's (test/integration/api). */
  async ownedParent(
    accountId: string,
    patId: string,
    now: Date,
    kind: 'pat' | 'session' = 'pat',
  ): Promise<ParentCredential | undefined> {
    if (kind !== 'pat') return undefined;
    const pat = this.pats.get(patId);
    if (!pat || pat.account_id !== accountId) return undefined;
    const chain: FakePat[] = [];
    for (let p: FakePat | undefined = pat; p; p = p.parent_token_id ? this.pats.get(p.parent_token_id) : undefined)
      chain.push(p);
    if (chain.some((p) => p.revoked_at !== null || (p.expires_at !== null && p.expires_at <= now)))
      throw new AppError('invalid_token');
    return {
      id: pat.id,
      scopeType: pat.scope_type,
      scopeId: pat.scope_id,
      gate: pat.gate,
      expiresAt: pat.expires_at,
      dailyCapMicro: pat.daily_cap_micro === null ? null : BigInt(pat.daily_cap_micro),
      depth: chain.length,
    };
  }

  /** Counts the account's live PATs (not revoked, expired or spent) for `bound`, as the PostgreSQL store does. */
  async insert(pat: NewPat, bound: PatBound): Promise<PatRow> {
    const live = [...this.pats.values()].filter(
      (p) =>
        p.account_id === pat.accountId &&
        p.revoked_at === null &&
        (p.expires_at === null || p.expires_at > pat.createdAt) &&
        !(p.single_use && p.used_at !== null),
    );
    bound.admit(Math.min(live.length, bound.limit));
    const row: FakePat = {
      id: pat.id,
      account_id: pat.accountId,
      scope_type: pat.scopeType as PatRow['scope_type'],
      scope_id: pat.scopeId,
      gate: pat.gate,
      label: pat.label,
      daily_cap_micro: pat.dailyCapMicro === null ? null : pat.dailyCapMicro.toString(),
      single_use: pat.singleUse,
      created_at: pat.createdAt,
      expires_at: pat.expiresAt,
      used_at: null,
      revoked_at: null,
      parent_token_id: pat.parentId,
      created_by: pat.createdBy,
    };
    this.pats.set(row.id, row);
    return row;
  }

  private ofAccount(accountId: string, scope: PatScope | undefined) {
    return [...this.pats.values()].filter(
      (p) =>
        p.account_id === accountId && (!scope || (p.scope_type === scope.scope_type && p.scope_id === scope.scope_id)),
    );
  }

  async page(accountId: string, request: PageRequest, scope: PatScope | undefined) {
    return page(this.ofAccount(accountId, scope), request);
  }

  async revoke(accountId: string, patId: string, scope: PatScope | undefined) {
    const row = this.ofAccount(accountId, scope).find((p) => p.id === patId);
    if (!row) return undefined;
    const at = row.revoked_at ?? new Date();
    for (const p of this.pats.values())
      if (p.id === patId || p.parent_token_id === patId) p.revoked_at = p.revoked_at ?? at;
    return row;
  }

  async capHolder(accountId: string, patId: string) {
    const row = this.ofAccount(accountId, undefined).find((p) => p.id === patId);
    const parent = row?.parent_token_id ? this.pats.get(row.parent_token_id) : undefined;
    return (
      row && {
        scope_type: row.scope_type,
        scope_id: row.scope_id,
        parent_token_id: row.parent_token_id,
        parent_scope_type: parent?.scope_type ?? null,
      }
    );
  }

  /** The PAT and every PAT below it acting as the same agent, as the PostgreSQL store does. */
  async setDailyCap(patId: string, agentId: string, dailyCapMicro: bigint | null) {
    const cap = dailyCapMicro === null ? null : dailyCapMicro.toString();
    const run = new Set([patId]);
    for (let grew = true; grew;) {
      grew = false;
      for (const p of this.pats.values())
        if (p.parent_token_id && run.has(p.parent_token_id) && !run.has(p.id) && p.scope_id === agentId)
          grew = Boolean(run.add(p.id));
    }
    for (const id of run) this.pats.get(id)!.daily_cap_micro = cap;
    return this.pats.get(patId)!;
  }
}

export class FakeAccountStore implements AccountStore {
  readonly accounts = new Map<string, AccountRow>();
  readonly apiKeys: Array<NewCredential & { accountId: string; revokedAt: Date | null }> = [];
  readonly treasuryPats: Array<Parameters<AccountStore['insertTreasuryPat']>[0]> = [];
  readonly owners = new Map<string, string>();
  inUnit = inUnit;

  async create(account: Omit<AccountRow, 'status'>, _actor: string, apiKey: NewCredential | undefined) {
    this.accounts.set(account.id, { ...account, status: 'active' });
    if (apiKey) this.apiKeys.push({ ...apiKey, accountId: account.id, revokedAt: null });
  }

  async get(accountId: string) {
    return this.accounts.get(accountId);
  }

  async revokeApiKey(accountId: string, _actor: string, _successor: string | null, now: Date) {
    const keys = this.apiKeys.filter((k) => k.accountId === accountId);
    if (keys.length === 0) return { outcome: 'none' as const };
    const live = keys.filter((k) => k.revokedAt === null);
    if (live.length === 0)
      return { outcome: 'already' as const, revokedAt: keys[0]!.revokedAt!, tokenIds: keys.map((k) => k.id) };
    for (const k of live) k.revokedAt = now;
    return { outcome: 'revoked' as const, revokedAt: now, tokenIds: keys.map((k) => k.id) };
  }

  async ownerOfTreasury(treasuryAccountId: string) {
    return this.owners.get(treasuryAccountId) ?? null;
  }

  async parentOf(): Promise<ParentCredential> {
    throw new AppError('invalid_token');
  }

  /** Counts the holder's Treasury PATs written here (none is revoked in this fake) for `bound`. */
  async insertTreasuryPat(pat: Parameters<AccountStore['insertTreasuryPat']>[0], bound: PatBound) {
    const holder = (p: typeof pat) => p.ownerAccountId ?? p.accountId;
    bound.admit(Math.min(this.treasuryPats.filter((p) => holder(p) === holder(pat)).length, bound.limit));
    this.treasuryPats.push(pat);
  }

  /** Revokes the account's api keys (the Treasury PATs here have no revocation of their own). */
  async revokeCredentials(accountId: string, _actor: string, now: Date) {
    const live = this.apiKeys.filter((k) => k.accountId === accountId && k.revokedAt === null);
    for (const k of live) k.revokedAt = now;
    const revoked = live.map((k) => k.id);
    return { revoked, tokenIds: revoked };
  }
}

export class FakeAgentStore implements AgentStore {
  readonly agents: AgentRow[] = [];
  inUnit = inUnit;

  async get(agentId: string) {
    return this.agents.find((a) => a.id === agentId);
  }

  async page(accountId: string, request: PageRequest) {
    return page(
      this.agents.filter((a) => a.account_id === accountId),
      request,
    );
  }

  async insert(_unit: StoreUnit, agent: AgentRow) {
    this.agents.push(agent);
  }

  async lockAgentCount(_unit: StoreUnit, accountId: string, atMost: number) {
    return Math.min(this.agents.filter((a) => a.account_id === accountId).length, atMost);
  }

  async firstOf(_unit: StoreUnit, accountId: string) {
    return this.agents.find((a) => a.account_id === accountId)!.id;
  }

  /** Sign-in proofs by session id (none unless a test sets one). */
  readonly proofs = new Map<string, { message: string; signature: string }>();

  async signInProofOf(sessionId: string) {
    return this.proofs.get(sessionId);
  }
}

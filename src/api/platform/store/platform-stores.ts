/**
 * What the platform wing's services (accounts, agents, PATs) need from storage, in their own words: the
 * store interfaces. `pg-platform-stores.ts` implements them over PostgreSQL (all the wing's SQL lives
 * there); test/support/fake-platform-stores.ts keeps them in memory for the services' unit tests.
 *
 * Defends: a service reaching a table directly (every read and write goes through one of these methods, so
 * each rule the service owns can be tested through the fake). Does not defend: the rules themselves (each
 * service's), nor two wings' writes being in one transaction unless they share the `StoreUnit` passed down.
 */
import type { ParentCredential } from '../../auth/credential-lineage.js';
import type { ScopeType } from '../../auth/principal.js';
import type { PageRequest } from '../../db/keyset-cursor.js';
import type { StoreUnit, UnitRunner } from '../../db/store-unit.js';
import type { PatView } from '../../../shared/api-responses/pat-responses.js';

export type { StoreUnit, UnitRunner } from '../../db/store-unit.js';

export interface AccountRow {
  id: string;
  owner_type: string;
  owner_id: string;
  account_key_ref: string;
  status: string;
  created_at: Date;
}

/** A credential row to write: its secret only as a hash. */
export interface NewCredential {
  id: string;
  tokenHash: string;
  label: string | null;
  createdBy: string;
  createdAt: Date;
}

export interface AccountStore extends UnitRunner {
  /**
   * Writes a Treasury account, its `account.minted` audit row and (for a minted account) its legacy api key,
   * in `unit` when given, else in a unit of its own.
   */
  create(
    account: Omit<AccountRow, 'status'>,
    actor: string,
    apiKey: NewCredential | undefined,
    unit?: StoreUnit,
  ): Promise<void>;
  get(accountId: string): Promise<AccountRow | undefined>;
  /**
   * Revokes the account's legacy api keys and every credential made with them, keeping `successor` (a PAT the
   * key minted) as a root, with an `api_key.revoked` audit row. `none`: the account has no key; `already`:
   * every key was revoked before (the first revocation's time and the keys' ids).
   */
  revokeApiKey(
    accountId: string,
    actor: string,
    successor: string | null,
    now: Date,
  ): Promise<{ outcome: 'none' } | { outcome: 'already' | 'revoked'; revokedAt: Date; tokenIds: string[] }>;
  /** The platform account whose agent holds this Treasury account, if any. */
  ownerOfTreasury(treasuryAccountId: string): Promise<string | null>;
  /** The live credential `tokenId` as a lineage parent (`invalid_token` when it is not live). */
  parentOf(tokenId: string, now: Date): Promise<ParentCredential>;
  /**
   * Revokes every live credential of the Treasury account — its api keys and Treasury PATs (a promoted
   * successor too), and the PATs of the agent holding it — and every credential made within them, with a
   * `credentials.revoked` audit row; nothing live: nothing written. Returns the live credentials it found
   * (`revoked`) and every id of their subtrees (for the bearer cache).
   */
  revokeCredentials(accountId: string, actor: string, now: Date): Promise<{ revoked: string[]; tokenIds: string[] }>;
  /**
   * Writes a Treasury PAT and its `pat.issued` audit row together, once `bound` admits it: the live PATs of
   * its holder (`ownerAccountId`, else the Treasury account itself) counted under the holder's lock.
   */
  insertTreasuryPat(
    pat: NewCredential & {
      accountId: string;
      ownerAccountId: string | null;
      expiresAt: Date | null;
      parentId: string | null;
    },
    bound: PatBound,
  ): Promise<void>;
}

/**
 * The bound a new PAT is written under (src/api/platform/pat-bounds.ts): its holder's live PATs, counted up
 * to `limit` under the holder's lock in the PAT's own transaction, are passed to `admit`, which throws to
 * refuse the PAT (nothing is written).
 */
export interface PatBound {
  limit: number;
  admit(live: number): void;
}

export interface AgentRow {
  id: string;
  account_id: string;
  label: string | null;
  treasury_account_id: string;
  created_at: Date;
}

export interface AgentStore extends UnitRunner {
  get(agentId: string): Promise<AgentRow | undefined>;
  /** A page of the account's agents, oldest first. */
  page(accountId: string, request: PageRequest): Promise<{ page: AgentRow[]; nextCursor: string | null }>;
  insert(unit: StoreUnit, agent: AgentRow): Promise<void>;
  /**
   * Locks the account's agent count until `unit` ends (concurrent spawns of the account wait for each other) and
   * reads it, stopping at `atMost` (../agent-bounds.ts).
   */
  lockAgentCount(unit: StoreUnit, accountId: string, atMost: number): Promise<number>;
  /** The account's first (oldest) agent, read in `unit`. */
  firstOf(unit: StoreUnit, accountId: string): Promise<string>;
  /** The SIWE message and signature a sign-in session was issued for; undefined for any other credential. */
  signInProofOf(sessionId: string): Promise<{ message: string; signature: string } | undefined>;
}

/** A PAT as stored (never its secret). */
export interface PatRow {
  id: string;
  scope_type: PatView['scope_type'];
  scope_id: string;
  gate: boolean;
  label: string | null;
  daily_cap_micro: string | null;
  single_use: boolean;
  created_at: Date;
  expires_at: Date | null;
  used_at: Date | null;
  revoked_at: Date | null;
  parent_token_id: string | null;
  created_by: string;
}

/** Narrows a PAT list or a revoke to the PATs of one scope (a seller's service PATs). */
export interface PatScope {
  scope_type: 'agent' | 'treasury' | 'service';
  scope_id: string;
}

export interface NewPat extends NewCredential {
  accountId: string;
  scopeType: ScopeType;
  scopeId: string;
  gate: boolean;
  singleUse: boolean;
  dailyCapMicro: bigint | null;
  expiresAt: Date | null;
  parentId: string | null;
}

export interface PatStore {
  /** The account's seller service `sellerId` (else its oldest), if the account has it. */
  sellerScope(accountId: string, sellerId: string | undefined): Promise<string | undefined>;
  /** The account's agent (by agent id, or by its Treasury account id), else its oldest; that id, if any. */
  agentScope(accountId: string, by: 'agent' | 'treasury', scopeId: string | undefined): Promise<string | undefined>;
  /** `id` as a lineage parent if it is a credential of that kind (a PAT by default) of the account; else undefined. */
  ownedParent(
    accountId: string,
    id: string,
    now: Date,
    kind?: 'pat' | 'session',
  ): Promise<ParentCredential | undefined>;
  /** Writes the PAT once `bound` admits it (the account's live PATs counted under the account's lock). */
  insert(pat: NewPat, bound: PatBound): Promise<PatRow>;
  page(
    accountId: string,
    request: PageRequest,
    scope: PatScope | undefined,
  ): Promise<{ page: PatRow[]; nextCursor: string | null }>;
  /** Revokes the account's PAT and every credential below it, together; undefined if it has no such PAT. */
  revoke(accountId: string, patId: string, scope: PatScope | undefined): Promise<PatRow | undefined>;
  /** What a daily cap change checks: the PAT's scope, its lineage parent and that one's scope, if it is the account's. */
  capHolder(
    accountId: string,
    patId: string,
  ): Promise<
    | {
        scope_type: PatRow['scope_type'];
        scope_id: string;
        parent_token_id: string | null;
        parent_scope_type: ScopeType | null;
      }
    | undefined
  >;
  /**
   * Sets the daily cap of the agent `agentId`'s PAT `patId` and, in the same transaction, of every PAT made within
   * it that acts as the same agent (they spend under its cap: ./pg-pat-caps.ts); returns the PAT's row.
   */
  setDailyCap(patId: string, agentId: string, dailyCapMicro: bigint | null): Promise<PatRow>;
}

/**
 * The platform wing's stores over PostgreSQL (./platform-stores.ts says what each method means): every query of
 * accounts, agents and PATs is here. A `StoreUnit` is a knex transaction.
 *
 * Defends: the atomicity each interface promises (an account and its audit row, a PAT and its audit row, a
 * revocation and its subtree, a daily cap and the PATs below that spend under it commit together). Does not
 * defend: who may call them (the services and routes).
 */
import type { Knex } from 'knex';
import { appendAuditEvent } from '../../audit/audit-ledger.js';
import { readParent } from '../../auth/lineage-parent.js';
import { revokeSubtree } from '../../auth/revoke-lineage.js';
import { readAccountPage } from '../../db/account-page.js';
import { readKeysetPage, type PageRequest } from '../../db/keyset-cursor.js';
import { pgUnitRunner, trxOf } from '../../db/store-unit.js';
import type { PatHolder } from '../pat-bounds.js';
import { capWithin, lockAgentCaps, setRunCap } from './pg-pat-caps.js';
import { lockAgentCount } from './pg-agent-counts.js';
import { lockLivePatCount } from './pg-pat-counts.js';
import type {
  AccountRow,
  AccountStore,
  AgentRow,
  AgentStore,
  NewCredential,
  NewPat,
  PatRow,
  PatBound,
  PatScope,
  PatStore,
} from './platform-stores.js';

/** The id shape of agents, which the agent list's page cursors name. */
const AGENT_ID = /^agt_[0-9a-f]{24}$/;
/** The id shape of PATs, which the PAT lists' page cursors name. */
const PAT_ID = /^pat_[0-9a-f]{24}$/;

const credentialColumns = (c: NewCredential) => ({
  id: c.id,
  token_hash: c.tokenHash,
  label: c.label,
  created_by: c.createdBy,
  created_at: c.createdAt,
});

/** Writes a new Treasury account, its legacy api key if any, and its audit row, in `trx`. */
async function writeAccount(
  trx: Knex.Transaction,
  account: Omit<AccountRow, 'status'>,
  actor: string,
  key?: NewCredential,
): Promise<void> {
  await trx('treasury_accounts').insert({ ...account, status: 'active' });
  if (key)
    await trx('api_tokens').insert({
      ...credentialColumns(key),
      kind: 'api_key',
      scope_type: 'treasury',
      scope_id: account.id,
    });
  await appendAuditEvent(trx, {
    chainKey: account.id,
    eventType: 'account.minted',
    actor,
    payload: { owner_type: account.owner_type, owner_id: account.owner_id },
    at: account.created_at,
  });
}

/** Retires an account's legacy api key and everything it made but `successor` (kept as a root); audited. */
function revokeApiKeyIn(knex: Knex): AccountStore['revokeApiKey'] {
  return (accountId, actor, successor, now) =>
    knex.transaction(async (trx) => {
      const keys = (await trx('api_tokens')
        .where({ kind: 'api_key', scope_type: 'treasury', scope_id: accountId })
        .forUpdate()
        .select('id', 'revoked_at')) as Array<{ id: string; revoked_at: Date | null }>;
      if (keys.length === 0) return { outcome: 'none' as const };
      const live = keys.filter((k) => k.revoked_at === null).map((k) => k.id);
      if (live.length === 0)
        return { outcome: 'already' as const, revokedAt: keys[0]!.revoked_at!, tokenIds: keys.map((k) => k.id) };
      const kept =
        successor === null
          ? 0
          : await trx('api_tokens')
              .where({ id: successor, kind: 'pat' })
              .whereIn('parent_token_id', live)
              .update({ parent_token_id: null });
      const ended = await revokeSubtree(trx, live, now);
      await appendAuditEvent(trx, {
        chainKey: accountId,
        eventType: 'api_key.revoked',
        actor,
        payload: { token_ids: live, successor: kept > 0 ? successor : null, ended: ended.length },
        at: now,
      });
      return {
        outcome: 'revoked' as const,
        revokedAt: now,
        tokenIds: [...new Set([...keys.map((k) => k.id), ...ended])],
      };
    });
}

/**
 * Ends every live credential of a Treasury account and everything made within them; audited. The credentials
 * are found by what they reach, not by lineage, so a PAT detached from the api key as its successor is
 * among them: every token scoped to the Treasury account (api keys, Treasury PATs) and every token scoped to
 * the agent holding it (agent PATs; their exchanged sessions and handoff PATs are in their subtrees).
 */
function revokeCredentialsIn(knex: Knex): AccountStore['revokeCredentials'] {
  return (accountId, actor, now) =>
    knex.transaction(async (trx) => {
      const agents = trx('agents').where({ treasury_account_id: accountId }).select('id');
      const live = (await trx('api_tokens')
        .where((q) =>
          q
            .where({ scope_type: 'treasury', scope_id: accountId })
            .orWhere((a) => a.where({ scope_type: 'agent' }).whereIn('scope_id', agents)),
        )
        .whereNull('revoked_at')
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        // Keys first, as the key's own revocation locks them (then its PATs): the two wait, never deadlock.
        .orderBy([{ column: 'kind' }, { column: 'id' }])
        .forUpdate()
        .select('id')) as Array<{ id: string }>;
      const revoked = live.map((r) => r.id);
      if (revoked.length === 0) return { revoked, tokenIds: [] };
      const tokenIds = await revokeSubtree(trx, revoked, now);
      await appendAuditEvent(trx, {
        chainKey: accountId,
        eventType: 'credentials.revoked',
        actor,
        payload: { token_ids: revoked, ended: tokenIds.length },
        at: now,
      });
      return { revoked, tokenIds };
    });
}

/** The holder a Treasury PAT counts against: the platform account owning it, else the Treasury account. */
const treasuryPatHolder = (accountId: string, ownerAccountId: string | null): PatHolder =>
  ownerAccountId === null
    ? { kind: 'treasury', treasuryAccountId: accountId }
    : { kind: 'account', accountId: ownerAccountId };

/** Counts the holder's live PATs under its lock in `trx` and lets `bound` refuse the new one. */
async function admitPat(trx: Knex.Transaction, holder: PatHolder, now: Date, bound: PatBound): Promise<void> {
  bound.admit(await lockLivePatCount(trx, holder, now, bound.limit));
}

export function pgAccountStore(knex: Knex): AccountStore {
  return {
    ...pgUnitRunner(knex),
    async create(account, actor, apiKey, unit) {
      if (unit) await writeAccount(trxOf(unit), account, actor, apiKey);
      else await knex.transaction((trx) => writeAccount(trx, account, actor, apiKey));
    },
    async get(accountId) {
      return (await knex<AccountRow>('treasury_accounts').where({ id: accountId }).first()) as AccountRow | undefined;
    },
    revokeApiKey: revokeApiKeyIn(knex),
    revokeCredentials: revokeCredentialsIn(knex),
    async ownerOfTreasury(treasuryAccountId) {
      const owner = (await knex('agents').where({ treasury_account_id: treasuryAccountId }).first('account_id')) as
        { account_id: string } | undefined;
      return owner?.account_id ?? null;
    },
    parentOf: async (tokenId, now) => (await readParent(knex, tokenId, now)).parent,
    insertTreasuryPat: (pat, bound) =>
      knex.transaction(async (trx) => {
        await admitPat(trx, treasuryPatHolder(pat.accountId, pat.ownerAccountId), pat.createdAt, bound);
        await trx('api_tokens').insert({
          ...credentialColumns(pat),
          kind: 'pat',
          scope_type: 'treasury',
          scope_id: pat.accountId,
          account_id: pat.ownerAccountId,
          expires_at: pat.expiresAt,
          parent_token_id: pat.parentId,
        });
        await appendAuditEvent(trx, {
          chainKey: pat.accountId,
          eventType: 'pat.issued',
          actor: pat.createdBy,
          payload: { pat_id: pat.id, label: pat.label, expires_at: pat.expiresAt?.toISOString() ?? null },
          at: pat.createdAt,
        });
      }),
  };
}

export function pgAgentStore(knex: Knex): AgentStore {
  return {
    ...pgUnitRunner(knex),
    async get(agentId) {
      return (await knex<AgentRow>('agents').where({ id: agentId }).first()) as AgentRow | undefined;
    },
    page: (accountId, request: PageRequest) => readAccountPage<AgentRow>(knex, 'agents', accountId, request, AGENT_ID),
    async insert(unit, agent) {
      await trxOf(unit)('agents').insert(agent);
    },
    lockAgentCount: (unit, accountId, atMost) => lockAgentCount(trxOf(unit), accountId, atMost),
    async firstOf(unit, accountId) {
      const agent = await trxOf(unit)('agents').where({ account_id: accountId }).orderBy('created_at').first('id');
      return agent.id as string;
    },
    async signInProofOf(sessionId) {
      const row = (await knex('api_tokens')
        .where({ id: sessionId, kind: 'session', session_origin: 'sign_in' })
        .whereNotNull('sign_in_message')
        .first('sign_in_message', 'sign_in_signature')) as
        { sign_in_message: string; sign_in_signature: string } | undefined;
      return row && { message: row.sign_in_message, signature: row.sign_in_signature };
    },
  };
}

const OLDEST = [{ column: 'created_at' }, { column: 'id' }];

export function pgPatStore(knex: Knex): PatStore {
  const ofAccount = (accountId: string, scope?: PatScope) => ({ account_id: accountId, kind: 'pat', ...scope });
  return {
    async sellerScope(accountId, sellerId) {
      const seller = (await knex('sellers')
        .where({ account_id: accountId, ...(sellerId === undefined ? {} : { id: sellerId }) })
        .orderBy(OLDEST)
        .first('id')) as { id: string } | undefined;
      return seller?.id;
    },
    async agentScope(accountId, by, scopeId) {
      const column = by === 'agent' ? 'id' : 'treasury_account_id';
      const agent = (await knex('agents')
        .where({ account_id: accountId, ...(scopeId === undefined ? {} : { [column]: scopeId }) })
        .orderBy(OLDEST)
        .first(column)) as Record<string, string> | undefined;
      return agent?.[column];
    },
    async ownedParent(accountId, id, now, kind = 'pat') {
      const owned = await knex('api_tokens').where({ id, account_id: accountId, kind }).first('id');
      if (!owned) return undefined;
      return (await readParent(knex, id, now)).parent;
    },
    insert: (pat: NewPat, bound: PatBound) =>
      knex.transaction(async (trx) => {
        await admitPat(trx, { kind: 'account', accountId: pat.accountId }, pat.createdAt, bound);
        let dailyCap = pat.dailyCapMicro === null ? null : pat.dailyCapMicro.toString();
        if (pat.scopeType === 'agent' && pat.parentId !== null) {
          // Within an agent PAT: its cap as it is now, under the lock a cap change takes (./pg-pat-caps.ts).
          await lockAgentCaps(trx, pat.scopeId);
          dailyCap = await capWithin(trx, pat.parentId, pat.scopeId, pat.dailyCapMicro);
        }
        const [row] = (await trx('api_tokens')
          .insert({
            ...credentialColumns(pat),
            kind: 'pat',
            scope_type: pat.scopeType,
            scope_id: pat.scopeId,
            gate: pat.gate,
            account_id: pat.accountId,
            single_use: pat.singleUse,
            daily_cap_micro: dailyCap,
            expires_at: pat.expiresAt,
            parent_token_id: pat.parentId,
          })
          .returning('*')) as PatRow[];
        return row!;
      }),
    page: (accountId, request, scope) =>
      readKeysetPage<PatRow>(knex('api_tokens').where(ofAccount(accountId, scope)), request, PAT_ID),
    revoke: (accountId, patId, scope) =>
      knex.transaction(async (trx) => {
        const [row] = (await trx('api_tokens')
          .where({ id: patId, ...ofAccount(accountId, scope) })
          .update({ revoked_at: trx.raw('COALESCE(revoked_at, now())') })
          .returning('*')) as PatRow[];
        if (row) await revokeSubtree(trx, [patId], row.revoked_at!);
        return row;
      }),
    async capHolder(accountId, patId) {
      return (await knex('api_tokens as c')
        .leftJoin('api_tokens as p', 'p.id', 'c.parent_token_id')
        .where({ 'c.id': patId, 'c.account_id': accountId, 'c.kind': 'pat' })
        .first('c.scope_type', 'c.scope_id', 'c.parent_token_id', 'p.scope_type as parent_scope_type')) as Awaited<
        ReturnType<PatStore['capHolder']>
      >;
    },
    setDailyCap: (patId, agentId, dailyCapMicro) =>
      knex.transaction((trx) => setRunCap(trx, patId, agentId, dailyCapMicro)),
  };
}

/** The platform wing's stores over one knex pool. */
export function pgPlatformStores(knex: Knex): { accounts: AccountStore; agents: AgentStore; pats: PatStore } {
  return { accounts: pgAccountStore(knex), agents: pgAgentStore(knex), pats: pgPatStore(knex) };
}

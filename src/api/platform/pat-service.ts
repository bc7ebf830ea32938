/**
 * Personal access tokens minted by an account session: scope `agent` (one agent's wallet operations, with
 * an optional daily cap), `treasury` (direct Treasury operations on one of the account's agents' Treasury
 * accounts), `service` (a seller's surface, once sellers exist), `gate` (the account's gate: its catalogue of
 * `mpp` sellers and their ledger reports; docs/gate.md) — alone, or with `gate: true` beside a Treasury scope. Listed without secrets, revoked at once
 * together with every credential made within it (revoke-lineage.ts; the caller evicts them from the bearer
 * cache with `Authenticator.forget`), daily cap changeable. A PAT minted by the owner's sign-in session is a
 * root of the account; one minted within another PAT (`parent_pat_id`: the `xx dashboard` handoff) is that
 * PAT's child, and one minted `within_session` (the dashboard's) the session's, bounded by credential-lineage.ts
 * and revoked with its parent. A change of an agent PAT's daily cap is also the cap of every PAT made within it
 * (./store/pg-pat-caps.ts). Lists hold every PAT of the account, whoever minted it. Stored only as SHA-256.
 * Lists are paged (keyset on created_at, id) and only ever hold the caller's account's PATs; a seller's list
 * narrows them to that seller's service PATs. An account holds at most TREASURY_MAX_PATS_PER_ACCOUNT live PATs,
 * whatever minted them (./pat-bounds.ts: 409 `pat_limit_reached`, counted under the account's lock).
 */
import { formatUsd, parseUsd } from '../../../policy/money.js';
import { requireBoundChild } from '../auth/lineage-parent.js';
import type { ParentCredential } from '../auth/credential-lineage.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { refuseOverPatBound } from './pat-bounds.js';
import type { PatRow, PatScope, PatStore } from './store/platform-stores.js';
import type { CreatedPat, PatPage, PatView } from '../../shared/api-responses/pat-responses.js';

export type { PatScope } from './store/platform-stores.js';

export interface PatServiceDeps {
  store: PatStore;
  metrics: Pick<TreasuryMetrics, 'tokensIssued'>;
  clock: () => Date;
  /** TREASURY_MAX_PATS_PER_ACCOUNT: the account's live PATs at most (./pat-bounds.ts). */
  maxPats: number;
}

const toView = (r: PatRow): PatView => ({
  id: r.id,
  scope_type: r.scope_type,
  scope_id: r.scope_id,
  gate: r.gate,
  label: r.label,
  daily_cap_usd: r.daily_cap_micro === null ? null : formatUsd(BigInt(r.daily_cap_micro)),
  single_use: r.single_use,
  created_at: r.created_at.toISOString(),
  expires_at: r.expires_at?.toISOString() ?? null,
  used_at: r.used_at?.toISOString() ?? null,
  revoked_at: r.revoked_at?.toISOString() ?? null,
  parent_token_id: r.parent_token_id,
  created_by: r.created_by,
});

export class PatService {
  constructor(private readonly deps: PatServiceDeps) {}

  /** The scope a new PAT names: the given one if this account holds it, else the account's first (oldest) of that kind. One row read. */
  private async resolveScope(
    accountId: string,
    scopeType: 'agent' | 'treasury' | 'service',
    scopeId: string | undefined,
  ): Promise<string> {
    if (scopeType === 'service') {
      const seller = await this.deps.store.sellerScope(accountId, scopeId);
      if (!seller) throw new AppError('scope_not_found', { message: 'No such seller service on this account.' });
      return seller;
    }
    const agent = await this.deps.store.agentScope(accountId, scopeType, scopeId);
    if (!agent) throw new AppError('scope_not_found');
    return agent;
  }

  async create(
    accountId: string,
    input: {
      scope_type: 'agent' | 'treasury' | 'service' | 'gate';
      scope_id?: string | undefined;
      /** Also carry the gate scope (a Treasury PAT only; a `gate` PAT always does). */
      gate?: boolean | undefined;
      label?: string | undefined;
      daily_cap_usd?: string | undefined;
      single_use?: boolean | undefined;
      expires_in_seconds?: number | undefined;
      /** Make the PAT within this PAT of the account (credential-lineage.ts): its child, never more. */
      parent_pat_id?: string | undefined;
      /** Make the PAT within the calling session (`sessionId`): its child, ending with it. */
      within_session?: boolean | undefined;
    },
    actor: string,
    sessionId?: string,
  ): Promise<CreatedPat> {
    if (input.daily_cap_usd !== undefined && input.scope_type !== 'agent') {
      throw new AppError('invalid_request', { message: 'daily_cap_usd applies to buyer (agent) PATs only.' });
    }
    if (input.gate === true && input.scope_type !== 'treasury' && input.scope_type !== 'gate') {
      throw new AppError('invalid_request', {
        message: 'gate: true goes with a treasury PAT (or use scope_type "gate" for a gate-only PAT).',
      });
    }
    const now = this.deps.clock();
    const parent =
      input.parent_pat_id !== undefined
        ? await this.parentPat(accountId, input.parent_pat_id, now)
        : input.within_session === true
          ? await this.parentSession(accountId, sessionId, now)
          : null;
    let scopeId: string;
    if (input.scope_type === 'gate') {
      if (input.scope_id !== undefined && input.scope_id !== accountId) throw new AppError('scope_not_found');
      scopeId = accountId;
    } else {
      const inherited = parent?.scopeType === input.scope_type ? parent.scopeId : undefined;
      scopeId = await this.resolveScope(accountId, input.scope_type, input.scope_id ?? inherited);
    }
    // A PAT minted by the owner's sign-in session is a root of the account (the session is only its creator),
    // unless it is asked for within the session.
    const child = requireBoundChild(
      parent,
      {
        scopeType: input.scope_type,
        scopeId,
        accountId,
        gate: input.scope_type === 'gate' || input.gate === true,
        expiresAt: input.expires_in_seconds ? new Date(now.getTime() + input.expires_in_seconds * 1000) : null,
        dailyCapMicro: input.daily_cap_usd === undefined ? undefined : parseUsd(input.daily_cap_usd),
      },
      now,
    );
    const pat = generateToken(TOKEN_PREFIXES.pat);
    const limit = this.deps.maxPats;
    const bound = { limit, admit: (live: number) => refuseOverPatBound(live, limit) };
    const row = await this.deps.store.insert(
      {
        id: generateId('pat_'),
        tokenHash: hashToken(pat),
        label: input.label ?? null,
        createdBy: actor,
        createdAt: now,
        accountId,
        scopeType: child.scopeType,
        scopeId: child.scopeId,
        gate: child.gate,
        singleUse: input.single_use ?? false,
        dailyCapMicro: child.dailyCapMicro,
        expiresAt: child.expiresAt,
        parentId: child.parentId,
      },
      bound,
    );
    this.deps.metrics.tokensIssued.inc({ kind: 'pat' });
    return { ...toView(row), pat };
  }

  /**
   * One of the account's live PATs as a lineage parent (another account's is `pat_not_found`). A revoked or
   * expired one makes nothing: 403 `lineage_exceeds_parent` (`refused: parent_not_live`) — the caller's own
   * bearer is fine, so never the 401 that would send it to sign in again.
   */
  private async parentPat(accountId: string, patId: string, now: Date): Promise<ParentCredential> {
    try {
      const parent = await this.deps.store.ownedParent(accountId, patId, now);
      if (!parent) throw new AppError('pat_not_found');
      return parent;
    } catch (e) {
      if (e instanceof AppError && e.code === 'invalid_token')
        throw new AppError('lineage_exceeds_parent', {
          fields: { refused: 'parent_not_live', parent_token_id: patId },
        });
      throw e;
    }
  }

  /**
   * The calling sign-in session as a lineage parent. It authenticated this request, so it is live unless it
   * ended since: then `invalid_token` (sign in again), as for any bearer that ended.
   */
  private async parentSession(accountId: string, sessionId: string | undefined, now: Date): Promise<ParentCredential> {
    if (sessionId === undefined) throw new AppError('invalid_request', { message: 'within_session needs a session.' });
    const parent = await this.deps.store.ownedParent(accountId, sessionId, now, 'session');
    if (!parent) throw new AppError('invalid_token');
    return parent;
  }

  /** A page of the account's PATs (of one scope when given), oldest first; never the secrets. */
  async list(accountId: string, request: PageRequest, scope?: PatScope): Promise<PatPage> {
    const { page, nextCursor } = await this.deps.store.page(accountId, request, scope);
    return { pats: page.map(toView), next_cursor: nextCursor };
  }

  /**
   * Revokes one of the account's PATs (of that scope when given; another one is `pat_not_found`) and, in
   * the same transaction, every credential below it (revoke-lineage.ts); `Authenticator.forget(patId)` evicts
   * the whole subtree from the bearer cache.
   */
  async revoke(accountId: string, patId: string, scope?: PatScope): Promise<PatView> {
    const row = await this.deps.store.revoke(accountId, patId, scope);
    if (!row) throw new AppError('pat_not_found');
    return toView(row);
  }

  /**
   * Changes an agent PAT's daily cap, and in the same transaction the cap every PAT made within it shows: they
   * spend from its total under its cap (src/api/auth/credential-chain.ts `spendingPatOf`), so their rows hold
   * it too. A PAT minted within another agent PAT has that one's cap: 403 `lineage_exceeds_parent`. A PAT minted
   * `within_session` caps its own spending (a session has no daily total), so its cap changes like a root's.
   */
  async setDailyCap(accountId: string, patId: string, dailyCapUsd: string | null): Promise<PatView> {
    const current = await this.deps.store.capHolder(accountId, patId);
    if (!current) throw new AppError('pat_not_found');
    if (current.scope_type !== 'agent')
      throw new AppError('invalid_request', { message: 'daily_cap_usd applies to buyer (agent) PATs only.' });
    if (current.parent_token_id !== null && current.parent_scope_type === 'agent')
      throw new AppError('lineage_exceeds_parent', {
        message: `This PAT spends under the daily cap of ${current.parent_token_id}; change that one.`,
        fields: { refused: 'daily_cap', parent_token_id: current.parent_token_id },
      });
    const cap = dailyCapUsd === null ? null : parseUsd(dailyCapUsd);
    return toView(await this.deps.store.setDailyCap(patId, current.scope_id, cap));
  }
}

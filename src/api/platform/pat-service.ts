/**
 * Personal access tokens minted by an account session: scope `agent` (one agent's wallet operations, with
 * an optional daily cap), `treasury` (direct Treasury operations on one of the account's agents' Treasury
 * accounts), `service` (a seller's surface, once sellers exist), `gate` (the account's gate: its catalogue of
 * `mpp` sellers and their ledger reports; docs/gate.md) — alone, or with `gate: true` beside a Treasury scope. Listed without secrets, revoked at once
 * together with every credential made within it (revoke-lineage.ts; the caller evicts them from the bearer
 * cache with `Authenticator.forget`), daily cap changeable. A PAT minted by the owner's sign-in session is a
 * root of the account; one minted within another PAT (`parent_pat_id`: the `xx dashboard` handoff) is that
 * PAT's child, bounded by credential-lineage.ts. Lists hold every PAT of the account, whoever minted it. Stored only as SHA-256. Lists are paged (keyset on created_at, id) and
 * only ever hold the caller's account's PATs; a seller's list narrows them to that seller's service PATs.
 */
import type { Knex } from 'knex';
import { formatUsd, parseUsd } from '../../../policy/money.js';
import { readParent, requireBoundChild } from '../auth/lineage-parent.js';
import type { ParentCredential } from '../auth/credential-lineage.js';
import { revokeSubtree } from '../auth/revoke-lineage.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import { readKeysetPage, type PageRequest } from '../db/keyset-cursor.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { CreatedPat, PatPage, PatView } from '../../shared/api-responses/pat-responses.js';

/** The id shape of PATs, which the PAT lists' page cursors name. */
const PAT_ID = /^pat_[0-9a-f]{24}$/;

/** Narrows a PAT list or a revoke to the PATs of one scope (a seller's service PATs). */
export interface PatScope {
  scope_type: 'agent' | 'treasury' | 'service';
  scope_id: string;
}

interface PatRow {
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
  constructor(
    private readonly knex: Knex,
    private readonly metrics: TreasuryMetrics,
    private readonly clock: () => Date,
  ) {}

  /** The scope a new PAT names: the given one if this account holds it, else the account's first (oldest) of that kind. One row read. */
  private async resolveScope(
    accountId: string,
    scopeType: 'agent' | 'treasury' | 'service',
    scopeId: string | undefined,
  ): Promise<string> {
    const oldest = [{ column: 'created_at' }, { column: 'id' }];
    if (scopeType === 'service') {
      const seller = (await this.knex('sellers')
        .where({ account_id: accountId, ...(scopeId === undefined ? {} : { id: scopeId }) })
        .orderBy(oldest)
        .first('id')) as { id: string } | undefined;
      if (!seller) throw new AppError('scope_not_found', { message: 'No such seller service on this account.' });
      return seller.id;
    }
    const column = scopeType === 'agent' ? 'id' : 'treasury_account_id';
    const agent = (await this.knex('agents')
      .where({ account_id: accountId, ...(scopeId === undefined ? {} : { [column]: scopeId }) })
      .orderBy(oldest)
      .first(column)) as Record<string, string> | undefined;
    if (!agent) throw new AppError('scope_not_found');
    return agent[column]!;
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
    },
    actor: string,
  ): Promise<CreatedPat> {
    if (input.daily_cap_usd !== undefined && input.scope_type !== 'agent') {
      throw new AppError('invalid_request', { message: 'daily_cap_usd applies to buyer (agent) PATs only.' });
    }
    if (input.gate === true && input.scope_type !== 'treasury' && input.scope_type !== 'gate') {
      throw new AppError('invalid_request', {
        message: 'gate: true goes with a treasury PAT (or use scope_type "gate" for a gate-only PAT).',
      });
    }
    const now = this.clock();
    const parent = input.parent_pat_id === undefined ? null : await this.parentPat(accountId, input.parent_pat_id, now);
    let scopeId: string;
    if (input.scope_type === 'gate') {
      if (input.scope_id !== undefined && input.scope_id !== accountId) throw new AppError('scope_not_found');
      scopeId = accountId;
    } else {
      const inherited = parent?.scopeType === input.scope_type ? parent.scopeId : undefined;
      scopeId = await this.resolveScope(accountId, input.scope_type, input.scope_id ?? inherited);
    }
    // A PAT minted by the owner's sign-in session is a root of the account (the session is only its creator).
    const child = requireBoundChild(
      parent,
      {
        scopeType: input.scope_type,
        scopeId,
        gate: input.scope_type === 'gate' || input.gate === true,
        expiresAt: input.expires_in_seconds ? new Date(now.getTime() + input.expires_in_seconds * 1000) : null,
        dailyCapMicro: input.daily_cap_usd === undefined ? undefined : parseUsd(input.daily_cap_usd),
      },
      now,
    );
    const pat = generateToken(TOKEN_PREFIXES.pat);
    const [row] = (await this.knex('api_tokens')
      .insert({
        id: generateId('pat_'),
        token_hash: hashToken(pat),
        kind: 'pat',
        scope_type: child.scopeType,
        scope_id: child.scopeId,
        gate: child.gate,
        account_id: accountId,
        label: input.label ?? null,
        single_use: input.single_use ?? false,
        daily_cap_micro: child.dailyCapMicro === null ? null : child.dailyCapMicro.toString(),
        created_by: actor,
        created_at: now,
        expires_at: child.expiresAt,
        parent_token_id: child.parentId,
      })
      .returning('*')) as PatRow[];
    this.metrics.tokensIssued.inc({ kind: 'pat' });
    return { ...toView(row!), pat };
  }

  /** One of the account's live PATs as a lineage parent (another account's is `pat_not_found`). */
  private async parentPat(accountId: string, patId: string, now: Date): Promise<ParentCredential> {
    const owned = await this.knex('api_tokens').where({ id: patId, account_id: accountId, kind: 'pat' }).first('id');
    if (!owned) throw new AppError('pat_not_found');
    return (await readParent(this.knex, patId, now)).parent;
  }

  /** A page of the account's PATs (of one scope when given), oldest first; never the secrets. */
  async list(accountId: string, request: PageRequest, scope?: PatScope): Promise<PatPage> {
    const query = this.knex('api_tokens').where({ account_id: accountId, kind: 'pat', ...scope });
    const { page, nextCursor } = await readKeysetPage<PatRow>(query, request, PAT_ID);
    return { pats: page.map(toView), next_cursor: nextCursor };
  }

  /**
   * Revokes one of the account's PATs (of that scope when given; another one is `pat_not_found`) and, in
   * the same transaction, every credential below it (revoke-lineage.ts); `Authenticator.forget(patId)` evicts
   * the whole subtree from the bearer cache.
   */
  async revoke(accountId: string, patId: string, scope?: PatScope): Promise<PatView> {
    return this.knex.transaction(async (trx) => {
      const [row] = (await trx('api_tokens')
        .where({ id: patId, account_id: accountId, kind: 'pat', ...scope })
        .update({ revoked_at: trx.raw('COALESCE(revoked_at, now())') })
        .returning('*')) as PatRow[];
      if (!row) throw new AppError('pat_not_found');
      await revokeSubtree(trx, [patId], row.revoked_at!);
      return toView(row);
    });
  }

  async setDailyCap(accountId: string, patId: string, dailyCapUsd: string | null): Promise<PatView> {
    const current = await this.knex('api_tokens')
      .where({ id: patId, account_id: accountId, kind: 'pat' })
      .first('scope_type', 'parent_token_id');
    if (!current) throw new AppError('pat_not_found');
    if (current.scope_type !== 'agent')
      throw new AppError('invalid_request', { message: 'daily_cap_usd applies to buyer (agent) PATs only.' });
    // A PAT minted within another spends from that PAT's total under its cap (credential-lineage.ts).
    if (current.parent_token_id !== null)
      throw new AppError('lineage_exceeds_parent', {
        message: `This PAT spends under the daily cap of ${current.parent_token_id as string}; change that one.`,
        fields: { refused: 'daily_cap', parent_token_id: current.parent_token_id },
      });
    const [row] = (await this.knex('api_tokens')
      .where({ id: patId })
      .update({ daily_cap_micro: dailyCapUsd === null ? null : parseUsd(dailyCapUsd).toString() })
      .returning('*')) as PatRow[];
    return toView(row!);
  }
}

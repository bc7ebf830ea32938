/**
 * Resolves `Authorization: Bearer <token>` to a principal. Handling is picked from the token prefix
 * (docs/security-model.md#sessions-and-tokens): `xx_pat_` PATs, `xx_treasury_sk_` legacy Treasury api keys
 * (accepted on Treasury routes only), `xx_live_sk_` removed master keys (401 with the migration remedy), and
 * the operator token from TREASURY_ADMIN_TOKEN, held only as a SHA-256 and compared in constant time.
 *
 * Defends: tokens are looked up by hash only; unknown, expired, revoked and spent single-use tokens all
 * answer 401 `invalid_token` with the reauthenticate recovery, without telling which.
 * A session carries what it was made from (`sessionOrigin`): a sign-in, or an exchanged agent PAT
 * (`parentTokenId`), which binds it to that agent and that PAT's daily cap; such a session is refused as
 * soon as its PAT is revoked or expired, whatever its own row says (session-powers.ts decides the rest).
 * Lookups are cached by token hash for TREASURY_AUTH_CACHE_MS (default 1 s; 0 disables): expiry is
 * re-checked on every hit, single-use tokens are never cached, and a revocation or cap change made through
 * this process evicts the token and the sessions exchanged from it at once (`forget`, `forgetSessionsOf`).
 * Does not defend: a stolen live token; a revocation made through another replica takes effect there
 * within the cache time; scope checks happen in the routes (`require-scope`).
 */
import type { Knex } from 'knex';
import { AppError, REAUTHENTICATE } from '../errors/app-error.js';
import { TOKEN_PREFIXES, hashToken, matchesHash } from './token-codec.js';

export type ScopeType = 'treasury' | 'agent' | 'service' | 'account' | 'gate';

export type Principal =
  | { kind: 'admin'; actor: 'admin' }
  | {
      kind: 'token';
      actor: string;
      tokenId: string;
      tokenKind: 'api_key' | 'pat' | 'session';
      scopeType: ScopeType;
      scopeId: string;
      /** The PAT carries the gate scope (its account's gate: catalogue and ledger reports; docs/gate.md). */
      gate: boolean;
      /** The platform account that owns the token (sessions and account-minted PATs). */
      accountId: string | null;
      /** Buyer (agent) PATs and the sessions exchanged from them: the PAT's daily cap in micro-USD, if any. */
      dailyCapMicro: bigint | null;
      /** Sessions: a SIWE / SIWS sign-in, or an exchanged agent PAT. Null for PATs and api keys. */
      sessionOrigin: SessionOrigin | null;
      /** An exchanged session: the agent PAT it was made from. */
      parentTokenId: string | null;
    };

export type SessionOrigin = 'sign_in' | 'pat_exchange';

const BEARER_RE = /^Bearer ([A-Za-z0-9_\-.~+/=]{1,512})$/;

interface TokenRow {
  id: string;
  kind: 'api_key' | 'pat' | 'session';
  scope_type: ScopeType;
  scope_id: string;
  gate: boolean;
  single_use: boolean;
  expires_at: Date | null;
  used_at: Date | null;
  revoked_at: Date | null;
  account_id: string | null;
  daily_cap_micro: string | null;
  session_origin: SessionOrigin | null;
  parent_token_id: string | null;
  parent_revoked_at: Date | null;
  parent_expires_at: Date | null;
  parent_daily_cap_micro: string | null;
}

const MAX_CACHED_TOKENS = 10_000;

export class Authenticator {
  private readonly adminTokenHash: string | undefined;
  private readonly cache = new Map<string, { row: TokenRow; at: number }>();

  constructor(
    private readonly knex: Knex,
    adminToken: string | undefined,
    private readonly cacheMs = 0,
  ) {
    this.adminTokenHash = adminToken ? hashToken(adminToken) : undefined;
  }

  /** Drops a token, and the sessions exchanged from it, from the lookup cache (after a revocation or a cap change). */
  forget(tokenId: string): void {
    for (const [hash, entry] of this.cache)
      if (entry.row.id === tokenId || entry.row.parent_token_id === tokenId) this.cache.delete(hash);
  }

  /** Drops every cached session of a platform account (after they were all revoked). */
  forgetSessionsOf(accountId: string): void {
    for (const [hash, entry] of this.cache)
      if (entry.row.kind === 'session' && entry.row.account_id === accountId) this.cache.delete(hash);
  }

  private async lookup(tokenHash: string, kind: TokenRow['kind']): Promise<TokenRow | undefined> {
    if (this.cacheMs > 0) {
      const hit = this.cache.get(tokenHash);
      if (hit && hit.row.kind === kind && Date.now() - hit.at < this.cacheMs) return hit.row;
    }
    // An exchanged session reads its PAT in the same statement: that PAT's revocation, expiry and cap rule it.
    const row = (await this.knex('api_tokens as t')
      .leftJoin('api_tokens as p', 'p.id', 't.parent_token_id')
      .where({ 't.token_hash': tokenHash, 't.kind': kind })
      .first(
        't.id',
        't.kind',
        't.scope_type',
        't.scope_id',
        't.gate',
        't.single_use',
        't.expires_at',
        't.used_at',
        't.revoked_at',
        't.account_id',
        't.daily_cap_micro',
        't.session_origin',
        't.parent_token_id',
        'p.revoked_at as parent_revoked_at',
        'p.expires_at as parent_expires_at',
        'p.daily_cap_micro as parent_daily_cap_micro',
      )) as TokenRow | undefined;
    if (this.cacheMs > 0 && row && !row.single_use && !row.revoked_at) {
      if (this.cache.size >= MAX_CACHED_TOKENS) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(tokenHash, { row, at: Date.now() });
    }
    return row;
  }

  get adminConfigured(): boolean {
    return this.adminTokenHash !== undefined;
  }

  /**
   * @param options.platform platform routes (identity, PATs, whoami, sellers…) refuse the removed legacy
   * Treasury master key with 401 `master_key_removed`; Treasury routes still accept it.
   */
  async authenticate(
    header: string | undefined,
    now: Date = new Date(),
    options: { platform?: boolean } = {},
  ): Promise<Principal> {
    if (header === undefined || header === '') throw new AppError('unauthorized', { recovery: REAUTHENTICATE });
    const match = BEARER_RE.exec(header);
    if (!match)
      throw new AppError('unauthorized', {
        message: 'Send `Authorization: Bearer <token>`.',
        recovery: REAUTHENTICATE,
      });
    const token = match[1]!;
    if (token.startsWith(TOKEN_PREFIXES.legacy_seller_key))
      throw new AppError('master_key_removed', { recovery: REAUTHENTICATE });
    if (options.platform && token.startsWith(TOKEN_PREFIXES.api_key))
      throw new AppError('master_key_removed', { recovery: REAUTHENTICATE });
    if (this.adminTokenHash && matchesHash(token, this.adminTokenHash)) return { kind: 'admin', actor: 'admin' };

    const kind = token.startsWith(TOKEN_PREFIXES.pat)
      ? 'pat'
      : token.startsWith(TOKEN_PREFIXES.api_key)
        ? 'api_key'
        : token.startsWith(TOKEN_PREFIXES.session)
          ? 'session'
          : undefined;
    if (!kind) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });

    const row = await this.lookup(hashToken(token), kind);
    if (!row || row.revoked_at || (row.expires_at && row.expires_at <= now)) {
      throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    // A session that cannot say what it was made from has no powers; an exchanged one ends with its PAT.
    if (
      row.kind === 'session' &&
      (row.session_origin === null || (row.session_origin === 'pat_exchange' && row.parent_token_id === null))
    ) {
      throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    if (
      row.parent_token_id !== null &&
      (row.parent_revoked_at || (row.parent_expires_at && row.parent_expires_at <= now))
    ) {
      throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    if (row.single_use) {
      const consumed = await this.knex('api_tokens')
        .where({ id: row.id })
        .whereNull('used_at')
        .update({ used_at: now });
      if (consumed === 0) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    const cap = row.parent_token_id === null ? row.daily_cap_micro : row.parent_daily_cap_micro;
    return {
      kind: 'token',
      actor: row.id,
      tokenId: row.id,
      tokenKind: row.kind,
      scopeType: row.scope_type,
      scopeId: row.scope_id,
      gate: row.kind === 'pat' && row.gate === true,
      accountId: row.account_id,
      dailyCapMicro: cap === null ? null : BigInt(cap),
      sessionOrigin: row.kind === 'session' ? row.session_origin : null,
      parentTokenId: row.parent_token_id,
    };
  }
}

/**
 * The agent a principal acts as, with the PAT whose daily cap and daily total its spending counts against:
 * an agent PAT itself, or a session exchanged from one. Undefined for every other bearer.
 */
export function agentBinding(
  principal: Principal,
): { agentId: string; patId: string; dailyCapMicro: bigint | null } | undefined {
  if (principal.kind !== 'token' || principal.scopeType !== 'agent') return undefined;
  if (principal.tokenKind === 'pat')
    return { agentId: principal.scopeId, patId: principal.tokenId, dailyCapMicro: principal.dailyCapMicro };
  if (
    principal.tokenKind === 'session' &&
    principal.sessionOrigin === 'pat_exchange' &&
    principal.parentTokenId !== null
  ) {
    return { agentId: principal.scopeId, patId: principal.parentTokenId, dailyCapMicro: principal.dailyCapMicro };
  }
  return undefined;
}

/**
 * The Treasury account a principal may act for: a Treasury PAT or api key names it; an agent PAT (or a
 * session exchanged from one) acts for its agent's Treasury account, on the wallet operations only
 * (`agentAllowed`). Anything else is a 403.
 */
export async function resolveWalletScope(knex: Knex, principal: Principal, agentAllowed: boolean): Promise<string> {
  const binding = agentAllowed ? agentBinding(principal) : undefined;
  if (binding) {
    const agent = await knex('agents').where({ id: binding.agentId }).first('treasury_account_id');
    if (!agent) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    return agent.treasury_account_id as string;
  }
  return requireTreasuryScope(principal);
}

/** The Treasury account a principal may act for, or a 403. */
export function requireTreasuryScope(principal: Principal): string {
  if (
    principal.kind === 'token' &&
    principal.scopeType === 'treasury' &&
    (principal.tokenKind === 'pat' || principal.tokenKind === 'api_key')
  ) {
    return principal.scopeId;
  }
  throw new AppError('insufficient_scope', {
    message: 'This route needs a Treasury-scoped PAT or the Treasury api key.',
  });
}

/**
 * The platform account whose gate a principal acts for: a PAT carrying the gate scope (a gate-only PAT, or a
 * Treasury PAT minted with `gate: true`), or a 403.
 */
export function requireGateScope(principal: Principal): string {
  if (principal.kind === 'token' && principal.tokenKind === 'pat' && principal.gate && principal.accountId !== null)
    return principal.accountId;
  throw new AppError('insufficient_scope', { message: 'This route needs a PAT with the gate scope.' });
}

/**
 * Resolves `Authorization: Bearer <token>` to a principal. Handling is picked from the token prefix
 * (spec §5): `xx_pat_` PATs, `xx_treasury_sk_` legacy Treasury api keys (accepted on Treasury routes
 * only), `xx_live_sk_` removed master keys (401 with the migration remedy), and the operator token from
 * TREASURY_ADMIN_TOKEN, held only as a SHA-256 and compared in constant time.
 *
 * Defends: tokens are looked up by hash only; unknown, expired, revoked and spent single-use tokens all
 * answer 401 `invalid_token` with the reauthenticate recovery, without telling which.
 * Lookups are cached by token hash for TREASURY_AUTH_CACHE_MS (default 1 s; 0 disables): expiry is
 * re-checked on every hit, single-use tokens are never cached, and a revocation or cap change made through
 * this process evicts the token at once (`forget`).
 * Does not defend: a stolen live token; a revocation made through another replica takes effect there
 * within the cache time; scope checks happen in the routes (`require-scope`).
 */
import type { Knex } from 'knex';
import { AppError, REAUTHENTICATE } from '../errors/app-error.js';
import { TOKEN_PREFIXES, hashToken, matchesHash } from './token-codec.js';

export type ScopeType = 'treasury' | 'agent' | 'service' | 'account';

export type Principal =
  | { kind: 'admin'; actor: 'admin' }
  | {
      kind: 'token';
      actor: string;
      tokenId: string;
      tokenKind: 'api_key' | 'pat' | 'session';
      scopeType: ScopeType;
      scopeId: string;
      /** The platform account that owns the token (sessions and account-minted PATs). */
      accountId: string | null;
      /** Buyer (agent) PATs: the daily cap in micro-USD, if any. */
      dailyCapMicro: bigint | null;
    };

const BEARER_RE = /^Bearer ([A-Za-z0-9_\-.~+/=]{1,512})$/;

interface TokenRow {
  id: string;
  kind: 'api_key' | 'pat' | 'session';
  scope_type: ScopeType;
  scope_id: string;
  single_use: boolean;
  expires_at: Date | null;
  used_at: Date | null;
  revoked_at: Date | null;
  account_id: string | null;
  daily_cap_micro: string | null;
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

  /** Drops a token from the lookup cache (after it was revoked or its cap changed). */
  forget(tokenId: string): void {
    for (const [hash, entry] of this.cache) if (entry.row.id === tokenId) this.cache.delete(hash);
  }

  private async lookup(tokenHash: string, kind: TokenRow['kind']): Promise<TokenRow | undefined> {
    if (this.cacheMs > 0) {
      const hit = this.cache.get(tokenHash);
      if (hit && hit.row.kind === kind && Date.now() - hit.at < this.cacheMs) return hit.row;
    }
    const row = (await this.knex('api_tokens')
      .where({ token_hash: tokenHash, kind })
      .first('id', 'kind', 'scope_type', 'scope_id', 'single_use', 'expires_at', 'used_at', 'revoked_at', 'account_id', 'daily_cap_micro')) as TokenRow | undefined;
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
  async authenticate(header: string | undefined, now: Date = new Date(), options: { platform?: boolean } = {}): Promise<Principal> {
    if (header === undefined || header === '') throw new AppError('unauthorized', { recovery: REAUTHENTICATE });
    const match = BEARER_RE.exec(header);
    if (!match) throw new AppError('unauthorized', { message: 'Send `Authorization: Bearer <token>`.', recovery: REAUTHENTICATE });
    const token = match[1]!;
    if (token.startsWith(TOKEN_PREFIXES.legacy_seller_key)) throw new AppError('master_key_removed', { recovery: REAUTHENTICATE });
    if (options.platform && token.startsWith(TOKEN_PREFIXES.api_key)) throw new AppError('master_key_removed', { recovery: REAUTHENTICATE });
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
    if (row.single_use) {
      const consumed = await this.knex('api_tokens').where({ id: row.id }).whereNull('used_at').update({ used_at: now });
      if (consumed === 0) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    return { kind: 'token', actor: row.id, tokenId: row.id, tokenKind: row.kind, scopeType: row.scope_type, scopeId: row.scope_id, accountId: row.account_id, dailyCapMicro: row.daily_cap_micro === null ? null : BigInt(row.daily_cap_micro) };
  }
}

/**
 * The Treasury account a principal may act for: a Treasury PAT or api key names it; an agent PAT acts for
 * its agent's Treasury account, on the wallet operations only (`agentAllowed`). Anything else is a 403.
 */
export async function resolveWalletScope(knex: Knex, principal: Principal, agentAllowed: boolean): Promise<string> {
  if (agentAllowed && principal.kind === 'token' && principal.tokenKind === 'pat' && principal.scopeType === 'agent') {
    const agent = await knex('agents').where({ id: principal.scopeId }).first('treasury_account_id');
    if (!agent) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    return agent.treasury_account_id as string;
  }
  return requireTreasuryScope(principal);
}

/** The platform account of an account session (`as_…`), or a 403: PATs cannot manage the account. */
export function requireSessionAccount(principal: Principal): string {
  if (principal.kind === 'token' && principal.tokenKind === 'session' && principal.accountId) return principal.accountId;
  throw new AppError('insufficient_scope', { message: 'This route needs an account session (as_…); run `xx init` or exchange an agent PAT.' });
}

/** The Treasury account a principal may act for, or a 403. */
export function requireTreasuryScope(principal: Principal): string {
  if (principal.kind === 'token' && principal.scopeType === 'treasury' && (principal.tokenKind === 'pat' || principal.tokenKind === 'api_key')) {
    return principal.scopeId;
  }
  throw new AppError('insufficient_scope', { message: 'This route needs a Treasury-scoped PAT or the Treasury api key.' });
}

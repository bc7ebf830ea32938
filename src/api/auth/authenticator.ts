/**
 * Resolves `Authorization: Bearer <token>` to a principal. Handling is picked from the token prefix
 * (docs/security-model.md#sessions-and-tokens): `xx_pat_` PATs, `xx_treasury_sk_` legacy Treasury api keys
 * (accepted on Treasury routes only), `xx_live_sk_` removed master keys (401 with the migration remedy), and
 * the operator token from TREASURY_ADMIN_TOKEN, held only as a SHA-256 and compared in constant time.
 *
 * Defends: tokens are looked up by hash only; unknown, expired, revoked and spent single-use tokens all
 * answer 401 `invalid_token` with the reauthenticate recovery, without telling which.
 * Every credential is read with its ancestors (credential-chain.ts, one statement): a token any of whose
 * ancestors is revoked or expired, or whose chain is deeper than the lineage allows, is `invalid_token`
 * (docs/security-model.md, "Credential lineage"). A session carries what it was made from (`sessionOrigin`):
 * a sign-in, or an exchanged agent PAT (`parentTokenId`), which binds it to that agent; spending of an agent
 * credential counts against the topmost agent PAT above it (`spendingPatId`) and that PAT's daily cap
 * (session-powers.ts decides the rest).
 * Credentials are read through a store (./credential-store.ts). Lookups are cached by token hash for TREASURY_AUTH_CACHE_MS (default 1 s; 0 disables): expiry is
 * re-checked on every hit, single-use tokens are never cached, and a revocation or cap change made through
 * this process evicts the token and every cached credential below it at once (`forget`, `forgetSessionsOf`; a read
 * begun before is not shared or cached after). Requests arriving while a token's chain is read share that read, so a
 * busy token costs one read per cache time, not one per request arriving during the read.
 * Does not defend: a stolen live token; a revocation made through another replica takes effect there
 * within the cache time; scope checks happen in the routes (`require-scope`).
 */
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import { AppError, REAUTHENTICATE } from '../errors/app-error.js';
import { agentTreasuryAccount } from './agent-treasury-account.js';
import { chainIsLive, spendingPatOf, type ChainRow } from './credential-chain.js';
import type { CredentialStore } from './credential-store.js';
import type { Principal } from './principal.js';
import { TOKEN_PREFIXES, hashToken, hashesEqual } from './token-codec.js';

const BEARER_RE = /^Bearer ([A-Za-z0-9_\-.~+/=]{1,512})$/;

const MAX_CACHED_TOKENS = 10_000;

export class Authenticator {
  private readonly adminTokenHash: string | undefined;
  /** By token hash; the least recently used goes when full, in O(1) (no walk over a Map's deleted head). */
  private readonly cache = new LRUCache<string, { chain: ChainRow[]; at: number }>({ max: MAX_CACHED_TOKENS });
  /** One read per token at a time: requests arriving while a token's chain is being read share that read. */
  private readonly reading = new Map<string, Promise<ChainRow[]>>();
  /** Raised by every `forget…`: a read begun before it neither answers later requests nor fills the cache. */
  private generation = 0;

  constructor(
    private readonly credentials: CredentialStore,
    adminToken: string | undefined,
    private readonly cacheMs = 0,
  ) {
    this.adminTokenHash = adminToken ? hashToken(adminToken) : undefined;
  }

  /** Drops a token, and every credential below it, from the lookup cache (after a revocation or a cap change). */
  forget(tokenId: string): void {
    this.generation++;
    this.reading.clear();
    this.evictWhere((chain) => chain.some((row) => row.id === tokenId));
  }

  /** Drops every cached session of a platform account (after they were all revoked). */
  forgetSessionsOf(accountId: string): void {
    this.generation++;
    this.reading.clear();
    this.evictWhere((chain) => chain.some((row) => row.kind === 'session' && row.account_id === accountId));
  }

  private evictWhere(matches: (chain: ChainRow[]) => boolean): void {
    const hashes: string[] = [];
    for (const [hash, entry] of this.cache.entries()) if (matches(entry.chain)) hashes.push(hash);
    for (const hash of hashes) this.cache.delete(hash);
  }

  /** The token with that hash and every credential above it (credential-chain.ts), nearest first. */
  private lookup(tokenHash: string, kind: ChainRow['kind']): Promise<ChainRow[]> {
    if (this.cacheMs <= 0) return this.credentials.chainByHash(tokenHash, kind);
    const hit = this.cache.get(tokenHash);
    if (hit && hit.chain[0]!.kind === kind && Date.now() - hit.at < this.cacheMs) return Promise.resolve(hit.chain);
    const key = `${kind}:${tokenHash}`;
    const pending = this.reading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const read = this.credentials
      .chainByHash(tokenHash, kind)
      .then((chain) => {
        const row = chain[0];
        if (generation === this.generation && row && !row.single_use && !row.revoked_at) {
          this.cache.set(tokenHash, { chain, at: Date.now() });
        }
        return chain;
      })
      .finally(() => {
        if (this.reading.get(key) === read) this.reading.delete(key);
      });
    this.reading.set(key, read);
    return read;
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
    // Hashed once: the operator token's check and the lookup by hash use the same digest.
    const tokenHash = hashToken(token);
    if (this.adminTokenHash && hashesEqual(tokenHash, this.adminTokenHash)) return { kind: 'admin', actor: 'admin' };

    const kind = token.startsWith(TOKEN_PREFIXES.pat)
      ? 'pat'
      : token.startsWith(TOKEN_PREFIXES.api_key)
        ? 'api_key'
        : token.startsWith(TOKEN_PREFIXES.session)
          ? 'session'
          : undefined;
    if (!kind) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });

    const chain = await this.lookup(tokenHash, kind);
    const row = chain[0];
    // The token and every credential above it must be live: a revoked or expired ancestor ends it.
    if (!row || !chainIsLive(chain, now)) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    // A session that cannot say what it was made from has no powers; an exchanged one ends with its PAT.
    if (
      row.kind === 'session' &&
      (row.session_origin === null || (row.session_origin === 'pat_exchange' && row.parent_token_id === null))
    ) {
      throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    if (row.single_use) {
      if (!(await this.credentials.consumeSingleUse(row.id, now)))
        throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    }
    return principalOf(chain);
  }
}

/** The principal a live chain (credential-chain.ts) stands for. */
function principalOf(chain: readonly ChainRow[]): Principal {
  const row = chain[0]!;
  const spending = spendingPatOf(chain);
  const cap = spending ? spending.daily_cap_micro : row.daily_cap_micro;
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
    spendingPatId: spending?.id ?? null,
  };
}

/**
 * The agent a principal acts as, with the PAT whose daily cap and daily total its spending counts against:
 * an agent PAT itself, or a session exchanged from one. Undefined for every other bearer.
 */
export function agentBinding(
  principal: Principal,
): { agentId: string; patId: string; dailyCapMicro: bigint | null } | undefined {
  if (principal.kind !== 'token' || principal.scopeType !== 'agent') return undefined;
  if (principal.spendingPatId === null) return undefined;
  if (
    principal.tokenKind === 'pat' ||
    (principal.tokenKind === 'session' && principal.sessionOrigin === 'pat_exchange')
  )
    return { agentId: principal.scopeId, patId: principal.spendingPatId, dailyCapMicro: principal.dailyCapMicro };
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
    const treasuryAccountId = await agentTreasuryAccount(knex, binding.agentId);
    if (!treasuryAccountId) throw new AppError('invalid_token', { recovery: REAUTHENTICATE });
    return treasuryAccountId;
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

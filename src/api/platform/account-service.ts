/**
 * Treasury accounts: minting (a per-account key generated in the HSM, stored only wrapped),
 * Treasury-scoped PATs (by the operator or the account's legacy api key only; lineage in
 * credential-lineage.ts; bounded by ./pat-bounds.ts) and the operator's revocation of every credential of an
 * account. Secrets are returned once and stored only as SHA-256.
 *
 * Every account key is made with a policy authority for the signer (docs/adr/0012-owner-signed-policies.md):
 * the owner, proven by their own SIWE sign-in, for an agent's account made by a sign-in or by its session;
 * the deployment's approver for operator-minted and platform accounts. The signer keeps the authority it
 * granted; the API stores it nowhere (GET /v1/wallets/{id}/policy reads it back from the signer).
 */
import { requireBoundChild } from '../auth/lineage-parent.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { refuseOverPatBound } from './pat-bounds.js';
import type { StoreUnit } from '../db/store-unit.js';
import type { AuthorityRequest } from '../../../signer/protocol/signer-protocol.js';
import type { AccountRow, AccountStore } from './store/platform-stores.js';
import type { IssuedTreasuryPat, MintedAccount } from '../../shared/api-responses/account-responses.js';

export type { AccountRow } from './store/platform-stores.js';

/** What an account needs of the signer: a new account key, generated in the HSM and returned only wrapped. */
export interface AccountKeySigner {
  /** `tenant`: whose share of the signer calls the key takes (../signing/signer-call-admission.ts); none: the shared one. */
  call(
    method: 'create_account_key',
    params: { authority: AuthorityRequest },
    tenant?: string,
  ): Promise<{ account_key_ref: string }>;
}

/** Operator-minted and platform accounts: the deployment's policy approver (configured on the signer only). */
export const APPROVER_AUTHORITY: AuthorityRequest = Object.freeze({ kind: 'approver' });

export interface AccountServiceDeps {
  store: AccountStore;
  signer: AccountKeySigner;
  metrics: TreasuryMetrics;
  /** TREASURY_MAX_PATS_PER_ACCOUNT: a Treasury PAT's holder's live PATs at most (./pat-bounds.ts). */
  maxPats: number;
}

export class AccountService {
  constructor(private readonly deps: AccountServiceDeps) {}

  async mint(input: { owner_type: string; owner_id: string }, actor: string): Promise<MintedAccount> {
    const apiKey = generateToken(TOKEN_PREFIXES.api_key);
    const { id, created_at } = await this.write(input, actor, APPROVER_AUTHORITY, (now) => ({
      id: generateId('tok_'),
      tokenHash: hashToken(apiKey),
      label: 'api_key',
      createdBy: actor,
      createdAt: now,
    }));
    this.deps.metrics.tokensIssued.inc({ kind: 'api_key' });
    return {
      id,
      owner_type: input.owner_type,
      owner_id: input.owner_id,
      status: 'active',
      created_at: created_at.toISOString(),
      api_key: apiKey,
    };
  }

  /**
   * Creates a Treasury account (its key generated in the HSM, stored wrapped) under `authority`, in `unit`
   * when given (e.g. the agent that will hold it, written in the same unit); `tenant`: the platform account whose
   * share of the signer calls its key takes (an agent's owner).
   */
  async create(
    input: { owner_type: string; owner_id: string },
    actor: string,
    authority: AuthorityRequest,
    unit?: StoreUnit,
    tenant?: string,
  ): Promise<{ id: string; created_at: Date }> {
    return this.write(input, actor, authority, () => undefined, unit, tenant);
  }

  private async write(
    input: { owner_type: string; owner_id: string },
    actor: string,
    authority: AuthorityRequest,
    apiKey: (now: Date) => Parameters<AccountStore['create']>[2],
    unit?: StoreUnit,
    tenant?: string,
  ): Promise<{ id: string; created_at: Date }> {
    const { account_key_ref } = await this.deps.signer.call('create_account_key', { authority }, tenant);
    const id = generateId('acct_');
    const now = new Date();
    const account = { id, owner_type: input.owner_type, owner_id: input.owner_id, account_key_ref, created_at: now };
    await this.deps.store.create(account, actor, apiKey(now), unit);
    this.deps.metrics.accountsMinted.inc();
    return { id, created_at: now };
  }

  async get(accountId: string): Promise<AccountRow> {
    const row = await this.deps.store.get(accountId);
    if (!row) throw new AppError('account_not_found');
    return row;
  }

  /**
   * Revokes the account's legacy api key (`xx_treasury_sk_`) and every credential made with it
   * (src/api/auth/revoke-lineage.ts), with an audit row; idempotent (the first revocation's time is kept).
   * `successor`: the Treasury PAT asking, when the key minted it, is kept and becomes a root of the Treasury
   * account (the documented way to retire the key: mint a PAT with it, then revoke the key with that PAT); it
   * keeps its own expiry. An account without a key (agents' accounts) is `api_key_not_found`.
   */
  async revokeApiKey(
    accountId: string,
    actor: string,
    successor: string | null = null,
  ): Promise<{ revoked_at: string; token_ids: string[] }> {
    await this.get(accountId);
    const revoked = await this.deps.store.revokeApiKey(accountId, actor, successor, new Date());
    if (revoked.outcome === 'none') throw new AppError('api_key_not_found');
    return { revoked_at: revoked.revokedAt.toISOString(), token_ids: revoked.tokenIds };
  }

  /**
   * The operator's remedy for a Treasury account whose credentials leaked: every live credential of it ends —
   * its legacy api key, its Treasury PATs (a successor the key's revocation kept as a root too, whoever asked
   * for it), the PATs of the agent holding it — with everything made within them, and an audit row
   * (`credentials.revoked`). Idempotent: nothing live, nothing to end (`revoked: 0`). The account and its
   * wallets stay; the operator mints the holder a new Treasury PAT (POST /v1/treasuries/{id}/pats) and an
   * agent's owner mints new PATs with a sign-in. Returns every id ended, for the bearer cache.
   */
  async revokeCredentials(
    accountId: string,
    actor: string,
  ): Promise<{ revoked_at: string; revoked: number; token_ids: string[] }> {
    await this.get(accountId);
    const now = new Date();
    const { revoked, tokenIds } = await this.deps.store.revokeCredentials(accountId, actor, now);
    return { revoked_at: now.toISOString(), revoked: revoked.length, token_ids: tokenIds };
  }

  /**
   * A Treasury PAT of the account, minted by the operator (a root) or by the account's legacy api key (its
   * child: src/api/auth/credential-lineage.ts bounds it, and revoking the key revokes it, unless it is the
   * successor that revokes the key). It belongs to the platform account whose agent holds this Treasury
   * account, if any, so that owner lists and revokes it.
   */
  async issueTreasuryPat(
    accountId: string,
    input: { label?: string | undefined; expires_in_seconds?: number | undefined },
    minter: { actor: string; parentTokenId: string | null },
  ): Promise<IssuedTreasuryPat> {
    await this.get(accountId);
    const token = generateToken(TOKEN_PREFIXES.pat);
    const id = generateId('pat_');
    const now = new Date();
    const parent = minter.parentTokenId === null ? null : await this.deps.store.parentOf(minter.parentTokenId, now);
    const child = requireBoundChild(
      parent,
      {
        scopeType: 'treasury',
        scopeId: accountId,
        gate: false,
        expiresAt: input.expires_in_seconds ? new Date(now.getTime() + input.expires_in_seconds * 1000) : null,
        dailyCapMicro: undefined,
      },
      now,
    );
    const ownerAccountId = await this.deps.store.ownerOfTreasury(accountId);
    const limit = this.deps.maxPats;
    await this.deps.store.insertTreasuryPat(
      {
        id,
        tokenHash: hashToken(token),
        label: input.label ?? null,
        createdBy: minter.actor,
        createdAt: now,
        accountId,
        ownerAccountId,
        expiresAt: child.expiresAt,
        parentId: child.parentId,
      },
      { limit, admit: (live) => refuseOverPatBound(live, limit) },
    );
    this.deps.metrics.tokensIssued.inc({ kind: 'pat' });
    return {
      id,
      token,
      scope_type: 'treasury',
      scope_id: accountId,
      label: input.label ?? null,
      created_at: now.toISOString(),
      expires_at: child.expiresAt?.toISOString() ?? null,
    };
  }
}

/**
 * Treasury accounts: minting (a per-account key generated in the HSM, stored only wrapped) and
 * Treasury-scoped PATs (by the operator or the account's legacy api key only; lineage in
 * credential-lineage.ts). Secrets are returned once and stored only as SHA-256.
 */
import type { Knex } from 'knex';
import { appendAuditEvent } from '../audit/audit-ledger.js';
import { readParent, requireBoundChild } from '../auth/lineage-parent.js';
import { revokeSubtree } from '../auth/revoke-lineage.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { SignerGateway } from '../services/signer-gateway.js';
import type { IssuedTreasuryPat, MintedAccount } from '../../shared/api-responses/account-responses.js';

export interface AccountRow {
  id: string;
  owner_type: string;
  owner_id: string;
  account_key_ref: string;
  status: string;
  created_at: Date;
}

export class AccountService {
  constructor(
    private readonly knex: Knex,
    private readonly signer: SignerGateway,
    private readonly metrics: TreasuryMetrics,
  ) {}

  async mint(input: { owner_type: string; owner_id: string }, actor: string): Promise<MintedAccount> {
    const apiKey = generateToken(TOKEN_PREFIXES.api_key);
    const { id, created_at } = await this.create(input, actor, async (trx, accountId, now) => {
      await trx('api_tokens').insert({
        id: generateId('tok_'),
        token_hash: hashToken(apiKey),
        kind: 'api_key',
        scope_type: 'treasury',
        scope_id: accountId,
        label: 'api_key',
        created_by: actor,
        created_at: now,
      });
    });
    this.metrics.tokensIssued.inc({ kind: 'api_key' });
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
   * Creates a Treasury account (its key generated in the HSM, stored wrapped). `within` runs in the same
   * transaction, e.g. to issue its api key or to link it to an agent.
   */
  async create(
    input: { owner_type: string; owner_id: string },
    actor: string,
    within?: (trx: Knex.Transaction, accountId: string, now: Date) => Promise<void>,
    outer?: Knex.Transaction,
  ): Promise<{ id: string; created_at: Date }> {
    const { account_key_ref } = await this.signer.call('create_account_key', {});
    const id = generateId('acct_');
    const now = new Date();
    const run = async (trx: Knex.Transaction) => {
      await trx('treasury_accounts').insert({
        id,
        owner_type: input.owner_type,
        owner_id: input.owner_id,
        account_key_ref,
        status: 'active',
        created_at: now,
      });
      await within?.(trx, id, now);
      await appendAuditEvent(trx, {
        chainKey: id,
        eventType: 'account.minted',
        actor,
        payload: { owner_type: input.owner_type, owner_id: input.owner_id },
        at: now,
      });
    };
    if (outer) await run(outer);
    else await this.knex.transaction(run);
    this.metrics.accountsMinted.inc();
    return { id, created_at: now };
  }

  async get(accountId: string): Promise<AccountRow> {
    const row = (await this.knex<AccountRow>('treasury_accounts').where({ id: accountId }).first()) as
      AccountRow | undefined;
    if (!row) throw new AppError('account_not_found');
    return row;
  }

  /**
   * Revokes the account's legacy api key (`xx_treasury_sk_`) and every credential made with it
   * (revoke-lineage.ts), with an audit row; idempotent (the first revocation's time is kept). `successor`:
   * the Treasury PAT asking, when the key minted it, is kept and becomes a root of the Treasury account
   * (the documented way to retire the key: mint a PAT with it, then revoke the key with that PAT); it keeps
   * its own expiry. An account without a key (agents' accounts) is `api_key_not_found`.
   */
  async revokeApiKey(
    accountId: string,
    actor: string,
    successor: string | null = null,
  ): Promise<{ revoked_at: string; token_ids: string[] }> {
    await this.get(accountId);
    return this.knex.transaction(async (trx) => {
      const keys = (await trx('api_tokens')
        .where({ kind: 'api_key', scope_type: 'treasury', scope_id: accountId })
        .forUpdate()
        .select('id', 'revoked_at')) as Array<{ id: string; revoked_at: Date | null }>;
      if (keys.length === 0) throw new AppError('api_key_not_found');
      const live = keys.filter((k) => k.revoked_at === null).map((k) => k.id);
      if (live.length === 0)
        return { revoked_at: keys[0]!.revoked_at!.toISOString(), token_ids: keys.map((k) => k.id) };
      const now = new Date();
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
      return { revoked_at: now.toISOString(), token_ids: [...new Set([...keys.map((k) => k.id), ...ended])] };
    });
  }

  /**
   * A Treasury PAT of the account, minted by the operator (a root) or by the account's legacy api key (its
   * child: credential-lineage.ts bounds it, and revoking the key revokes it, unless it is the successor
   * that revokes the key). It belongs to the platform
   * account whose agent holds this Treasury account, if any, so that owner lists and revokes it.
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
    const parent =
      minter.parentTokenId === null ? null : (await readParent(this.knex, minter.parentTokenId, now)).parent;
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
    const owner = (await this.knex('agents').where({ treasury_account_id: accountId }).first('account_id')) as
      { account_id: string } | undefined;
    await this.knex.transaction(async (trx) => {
      await trx('api_tokens').insert({
        id,
        token_hash: hashToken(token),
        kind: 'pat',
        scope_type: 'treasury',
        scope_id: accountId,
        account_id: owner?.account_id ?? null,
        label: input.label ?? null,
        created_by: minter.actor,
        created_at: now,
        expires_at: child.expiresAt,
        parent_token_id: child.parentId,
      });
      await appendAuditEvent(trx, {
        chainKey: accountId,
        eventType: 'pat.issued',
        actor: minter.actor,
        payload: { pat_id: id, label: input.label ?? null, expires_at: child.expiresAt?.toISOString() ?? null },
        at: now,
      });
    });
    this.metrics.tokensIssued.inc({ kind: 'pat' });
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

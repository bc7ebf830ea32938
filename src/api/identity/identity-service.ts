/**
 * Sign-in and sessions. A server-issued nonce (single use, 10 minutes) goes into a SIWE or SIWS message;
 * `init` verifies it, consumes the nonce atomically (a replay finds it used), creates the account and its
 * first agent (with its own Treasury account) on first sign-in, and issues an `as_` session that expires.
 * A SIWE sign-in may carry a SIWS attestation of the same seed's Solana key (same nonce): both identities
 * are then the same account's, so `xx init --chain solana` later lands there; an identity is one account's
 * for ever (PRIMARY KEY (chain, address) of `identities`), and a pair of two accounts is refused.
 * `exchangePat` turns an agent PAT into a session bound to that agent and that PAT (`pat_exchange`: it
 * acts as the agent, never as the owner — session-powers.ts — and expires no later than the PAT; at most
 * MAX_LIVE_EXCHANGED_SESSIONS live per PAT). `logout` ends the caller's session; `revokeAllSessions` ends
 * every session of an account; both end every credential made within those sessions (revoke-lineage.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { readParent, requireBoundChild } from '../auth/lineage-parent.js';
import { revokeSubtree } from '../auth/revoke-lineage.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import type { Principal } from '../auth/authenticator.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from '../platform/account-service.js';
import { verifySiwe, type VerifiedSignIn } from './sign-in-message.js';
import type { InitBody } from './sign-in-body.js';
import { verifySiws } from './siws-attestation.js';
import type {
  IdentityNonce,
  LoggedOut,
  SessionGrant,
  SessionsRevoked,
} from '../../shared/api-responses/identity-responses.js';

const NONCE_TTL_SECONDS = 600;
/** Live sessions exchanged from one PAT: the CLI's, a racing second process's, one more; older ones end. */
export const MAX_LIVE_EXCHANGED_SESSIONS = 3;
/** Dead nonces purged per issue: more than one, so a backlog (say, after the purge was added) drains. */
const NONCE_PURGE_BATCH = 100;

export class IdentityService {
  constructor(
    private readonly knex: Knex,
    private readonly accounts: AccountService,
    private readonly metrics: TreasuryMetrics,
    private readonly options: {
      publicUrl: string;
      sessionTtlSeconds: number;
      clock: () => Date;
      evmChainIds: readonly number[];
    },
  ) {}

  /**
   * A fresh nonce; each issue also purges up to NONCE_PURGE_BATCH used or expired ones, so the table holds
   * the live nonces and little else (their number bounded by the per-address nonce limit).
   */
  async issueNonce(): Promise<IdentityNonce> {
    const nonce = randomBytes(16).toString('hex');
    const now = this.options.clock();
    const expiresAt = new Date(now.getTime() + NONCE_TTL_SECONDS * 1000);
    await this.knex('identity_nonces').insert({ nonce, expires_at: expiresAt });
    await this.purgeDeadNonces(now);
    return { nonce, expires_at: expiresAt.toISOString() };
  }

  /**
   * Deletes up to `limit` nonces that can no longer sign anyone in (used, or expired at `now`); rows another
   * purge or a sign-in holds are skipped, never waited for. Returns how many were deleted.
   */
  async purgeDeadNonces(now: Date, limit = NONCE_PURGE_BATCH): Promise<number> {
    return this.knex('identity_nonces')
      .whereIn(
        'nonce',
        this.knex('identity_nonces')
          .select('nonce')
          .where((q) => q.where('expires_at', '<=', now).orWhereNotNull('used_at'))
          .limit(limit)
          .forUpdate()
          .skipLocked(),
      )
      .delete();
  }

  /**
   * Signs in with SIWE (`chain: 'evm'`, optionally with a SIWS attestation of the same seed's Solana key in
   * `link_solana`, over the same nonce) or SIWS (`chain: 'solana'`). Every identity the request proves is one
   * account's: the account any of them already belongs to, or a new one; the others are linked to it. Two
   * identities of two accounts are `identity_already_linked` (409), and nothing changes.
   */
  async init(input: InitBody): Promise<SessionGrant> {
    const now = this.options.clock();
    const expect = {
      publicUrl: this.options.publicUrl,
      evmChainIds: this.options.evmChainIds,
      now,
      maxAgeSeconds: NONCE_TTL_SECONDS,
    };
    const primary =
      input.chain === 'evm' ? await verifySiwe(input.message, input.signature, expect) : verifySiws(input, expect);
    const linked = input.chain === 'evm' && input.link_solana ? verifySiws(input.link_solana, expect) : undefined;
    if (linked && linked.nonce !== primary.nonce)
      throw new AppError('sign_in_nonce_invalid', {
        message: 'The SIWS attestation in link_solana must carry the nonce of the SIWE message.',
      });
    const key = (v: VerifiedSignIn) => ({
      chain: v.chain,
      address: v.chain === 'evm' ? v.address.toLowerCase() : v.address,
    });
    const proven = [key(primary), ...(linked ? [key(linked)] : [])];

    return this.knex.transaction(async (trx) => {
      const consumed = await trx('identity_nonces')
        .where({ nonce: primary.nonce })
        .whereNull('used_at')
        .andWhere('expires_at', '>', now)
        .update({ used_at: now });
      if (consumed === 0) throw new AppError('sign_in_nonce_invalid');
      // One lock per identity, always taken in the same order, so two sign-ins naming the same pair wait in turn.
      const lockKeys = proven.map((id) => `identity:${id.chain}:${id.address}`).sort();
      for (const lockKey of lockKeys) await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 11))', [lockKey]);
      const known = (await trx('identities')
        .where((q) => {
          for (const id of proven) q.orWhere(id);
        })
        .select('chain', 'address', 'account_id')) as Array<{ chain: string; address: string; account_id: string }>;
      const accountIds = [...new Set(known.map((r) => r.account_id))];
      if (accountIds.length > 1) {
        const other = known.find((r) => r.chain === 'solana') ?? known[known.length - 1]!;
        throw new AppError('identity_already_linked', { fields: { chain: other.chain, address: other.address } });
      }
      let accountId: string;
      let created = false;
      if (accountIds.length === 1) {
        accountId = accountIds[0]!;
      } else {
        accountId = generateId('acc_');
        created = true;
        await trx('accounts').insert({ id: accountId, created_at: now });
      }
      for (const [i, id] of proven.entries()) {
        if (known.some((r) => r.chain === id.chain && r.address === id.address)) {
          await trx('identities').where(id).update({ last_sign_in_at: now });
          continue;
        }
        await trx('identities')
          .insert({
            ...id,
            account_id: accountId,
            created_at: now,
            last_sign_in_at: now,
            // The identity that signed in to a new account is its own; any other was linked to the account.
            linked_at: created && i === 0 ? null : now,
          })
          .catch((err: unknown) => {
            if ((err as { code?: string }).code === '23505')
              throw new AppError('identity_already_linked', { fields: id, cause: err });
            throw err;
          });
      }
      if (created) await this.spawnAgent(trx, accountId, 'default', now);
      const agent = await trx('agents').where({ account_id: accountId }).orderBy('created_at').first('id');
      const session = await this.issueSession(trx, { accountId, origin: 'sign_in' }, now);
      this.metrics.tokensIssued.inc({ kind: 'session' });
      return { ...session, account_id: accountId, agent_id: agent.id as string, created };
    });
  }

  /** A new agent with its own Treasury account (its key generated in the HSM). */
  async spawnAgent(trx: Knex.Transaction, accountId: string, label: string, now: Date): Promise<string> {
    const agentId = generateId('agt_');
    const treasury = await this.accounts.create({ owner_type: 'agent', owner_id: agentId }, accountId, undefined, trx);
    await trx('agents').insert({
      id: agentId,
      account_id: accountId,
      label,
      treasury_account_id: treasury.id,
      created_at: now,
    });
    return agentId;
  }

  /**
   * A sign-in session is scoped to the account (a root); an exchanged one to its agent, naming its PAT as
   * parent, with the expiry credential-lineage.ts bounded.
   */
  private async issueSession(
    trx: Knex.Transaction,
    from:
      | { accountId: string; origin: 'sign_in' }
      | { accountId: string; origin: 'pat_exchange'; agentId: string; patId: string; expiresAt: Date },
    now: Date,
  ): Promise<{ session: string; expires_at: string }> {
    const session = generateToken(TOKEN_PREFIXES.session);
    const expiresAt =
      from.origin === 'pat_exchange' ? from.expiresAt : new Date(now.getTime() + this.options.sessionTtlSeconds * 1000);
    await trx('api_tokens').insert({
      id: generateId('ses_'),
      token_hash: hashToken(session),
      kind: 'session',
      scope_type: from.origin === 'pat_exchange' ? 'agent' : 'account',
      scope_id: from.origin === 'pat_exchange' ? from.agentId : from.accountId,
      account_id: from.accountId,
      session_origin: from.origin,
      parent_token_id: from.origin === 'pat_exchange' ? from.patId : null,
      created_by: from.origin === 'pat_exchange' ? from.patId : from.accountId,
      created_at: now,
      expires_at: expiresAt,
    });
    return { session, expires_at: expiresAt.toISOString() };
  }

  /**
   * A session bound to the agent PAT presented, ending no later than that PAT (and its ancestors). At most
   * MAX_LIVE_EXCHANGED_SESSIONS live sessions per PAT: a new exchange revokes the oldest beyond that, so a
   * client that re-exchanges (the CLI, when its session expires or answers 401) keeps working while a loop
   * of exchanges cannot pile up live sessions and rate-limit buckets. Token secrets are stored hashed, so a
   * live session cannot be handed back; the bound is the reuse.
   */
  async exchangePat(principal: Principal): Promise<SessionGrant & { ended: string[] }> {
    if (principal.kind !== 'token' || principal.tokenKind !== 'pat' || principal.scopeType !== 'agent') {
      throw new AppError('insufficient_scope', { message: 'Only an agent PAT can be exchanged for a session.' });
    }
    const agent = await this.knex('agents').where({ id: principal.scopeId }).first('id', 'account_id');
    if (!agent) throw new AppError('invalid_token');
    const now = this.options.clock();
    const { ended, ...session } = await this.knex.transaction(async (trx) => {
      // Under the PAT's row lock: a revocation committed first is seen here, one committed after revokes this
      // session too; two exchanges of one PAT take turns, so the bound below holds.
      const locked = await trx('api_tokens').where({ id: principal.tokenId }).forUpdate().first('id');
      if (!locked) throw new AppError('invalid_token');
      const { parent } = await readParent(trx, principal.tokenId, now);
      const child = requireBoundChild(
        parent,
        {
          scopeType: 'agent',
          scopeId: agent.id as string,
          gate: false,
          expiresAt: new Date(now.getTime() + this.options.sessionTtlSeconds * 1000),
          dailyCapMicro: undefined,
        },
        now,
      );
      const issued = await this.issueSession(
        trx,
        {
          accountId: agent.account_id,
          origin: 'pat_exchange',
          agentId: agent.id,
          patId: principal.tokenId,
          expiresAt: child.expiresAt!,
        },
        now,
      );
      return { ...issued, ended: await this.endOldestExchanged(trx, principal.tokenId, now) };
    });
    this.metrics.tokensIssued.inc({ kind: 'session' });
    return { ...session, account_id: agent.account_id, agent_id: agent.id, created: false, ended };
  }

  /** Revokes the live sessions of a PAT beyond the newest MAX_LIVE_EXCHANGED_SESSIONS; returns their ids. */
  private async endOldestExchanged(trx: Knex.Transaction, patId: string, now: Date): Promise<string[]> {
    const stale = (await trx('api_tokens')
      .where({ parent_token_id: patId, kind: 'session' })
      .whereNull('revoked_at')
      .where((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .offset(MAX_LIVE_EXCHANGED_SESSIONS)
      .select('id')) as Array<{ id: string }>;
    return revokeSubtree(
      trx,
      stale.map((r) => r.id),
      now,
    );
  }

  /** Ends one session (the caller's own) and every credential made within it; idempotent. */
  async logout(sessionId: string): Promise<LoggedOut & { ended: string[] }> {
    return this.knex.transaction(async (trx) => {
      const [row] = (await trx('api_tokens')
        .where({ id: sessionId, kind: 'session' })
        .update({ revoked_at: trx.raw('COALESCE(revoked_at, ?)', [this.options.clock()]) })
        .returning(['id', 'revoked_at'])) as Array<{ id: string; revoked_at: Date }>;
      if (!row) throw new AppError('invalid_token');
      const ended = await revokeSubtree(trx, [row.id], row.revoked_at);
      return { session_id: row.id, revoked_at: row.revoked_at.toISOString(), ended };
    });
  }

  /**
   * Ends every live session of an account, sign-in and exchanged alike, and every credential made within
   * them (revoke-lineage.ts), in one transaction. PATs the owner minted with a sign-in session are roots of
   * the account, not the session's children: they stay (revoked one by one with DELETE /v1/pats/{id}).
   */
  async revokeAllSessions(accountId: string): Promise<SessionsRevoked & { ended: string[] }> {
    return this.knex.transaction(async (trx) => {
      const now = this.options.clock();
      const live = (await trx('api_tokens')
        .where({ account_id: accountId, kind: 'session' })
        .whereNull('revoked_at')
        .select('id')) as Array<{ id: string }>;
      const ended = await revokeSubtree(
        trx,
        live.map((r) => r.id),
        now,
      );
      return { account_id: accountId, revoked: live.length, ended };
    });
  }
}

/**
 * Sign-in and sessions. A server-issued nonce (single use, 10 minutes) goes into a SIWE or SIWS message;
 * `init` verifies it, consumes the nonce atomically (a replay finds it used), creates the account and its
 * first agent (with its own Treasury account) on first sign-in, and issues an `as_` session that expires.
 * `exchangePat` turns an agent PAT into a session bound to that agent and that PAT (`pat_exchange`: it
 * acts as the agent, never as the owner — session-powers.ts — and expires no later than the PAT).
 * `logout` ends the caller's session; `revokeAllSessions` ends every session of an account.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import type { Principal } from '../auth/authenticator.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AccountService } from './account-service.js';
import { verifySiwe, verifySiws } from '../identity/sign-in-message.js';
import type {
  IdentityNonce,
  LoggedOut,
  SessionGrant,
  SessionsRevoked,
} from '../../shared/api-responses/identity-responses.js';

const NONCE_TTL_SECONDS = 600;
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

  async init(input: { message: string; signature: string; chain: 'evm' | 'solana' }): Promise<SessionGrant> {
    const now = this.options.clock();
    const expect = {
      publicUrl: this.options.publicUrl,
      evmChainIds: this.options.evmChainIds,
      now,
      maxAgeSeconds: NONCE_TTL_SECONDS,
    };
    const verified =
      input.chain === 'evm'
        ? await verifySiwe(input.message, input.signature, expect)
        : await verifySiws(input.message, input.signature, expect);
    const address = verified.chain === 'evm' ? verified.address.toLowerCase() : verified.address;

    return this.knex.transaction(async (trx) => {
      const consumed = await trx('identity_nonces')
        .where({ nonce: verified.nonce })
        .whereNull('used_at')
        .andWhere('expires_at', '>', now)
        .update({ used_at: now });
      if (consumed === 0) throw new AppError('sign_in_nonce_invalid');
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 11))', [`identity:${verified.chain}:${address}`]);
      const identity = await trx('identities').where({ chain: verified.chain, address }).first('account_id');
      let accountId: string;
      let created = false;
      if (identity) {
        accountId = identity.account_id;
        await trx('identities').where({ chain: verified.chain, address }).update({ last_sign_in_at: now });
      } else {
        accountId = generateId('acc_');
        created = true;
        await trx('accounts').insert({ id: accountId, created_at: now });
        await trx('identities').insert({
          chain: verified.chain,
          address,
          account_id: accountId,
          created_at: now,
          last_sign_in_at: now,
        });
        await this.spawnAgent(trx, accountId, 'default', now);
      }
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
   * A sign-in session is scoped to the account; an exchanged one to its agent, naming its PAT as parent
   * and ending no later than that PAT.
   */
  private async issueSession(
    trx: Knex.Transaction,
    from:
      | { accountId: string; origin: 'sign_in' }
      | { accountId: string; origin: 'pat_exchange'; agentId: string; patId: string; patExpiresAt: Date | null },
    now: Date,
  ): Promise<{ session: string; expires_at: string }> {
    const session = generateToken(TOKEN_PREFIXES.session);
    let expiresAt = new Date(now.getTime() + this.options.sessionTtlSeconds * 1000);
    if (from.origin === 'pat_exchange' && from.patExpiresAt && from.patExpiresAt < expiresAt)
      expiresAt = from.patExpiresAt;
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

  async exchangePat(principal: Principal): Promise<SessionGrant> {
    if (principal.kind !== 'token' || principal.tokenKind !== 'pat' || principal.scopeType !== 'agent') {
      throw new AppError('insufficient_scope', { message: 'Only an agent PAT can be exchanged for a session.' });
    }
    const agent = await this.knex('agents').where({ id: principal.scopeId }).first('id', 'account_id');
    if (!agent) throw new AppError('invalid_token');
    const now = this.options.clock();
    const session = await this.knex.transaction(async (trx) => {
      // Under the PAT's row lock: a revocation committed first is seen here, one committed after revokes this session too.
      const pat = await trx('api_tokens')
        .where({ id: principal.tokenId })
        .forUpdate()
        .first('expires_at', 'revoked_at');
      if (!pat || pat.revoked_at) throw new AppError('invalid_token');
      return this.issueSession(
        trx,
        {
          accountId: agent.account_id,
          origin: 'pat_exchange',
          agentId: agent.id,
          patId: principal.tokenId,
          patExpiresAt: pat.expires_at,
        },
        now,
      );
    });
    this.metrics.tokensIssued.inc({ kind: 'session' });
    return { ...session, account_id: agent.account_id, agent_id: agent.id, created: false };
  }

  /** Ends one session (the caller's own); idempotent. */
  async logout(sessionId: string): Promise<LoggedOut> {
    const [row] = (await this.knex('api_tokens')
      .where({ id: sessionId, kind: 'session' })
      .update({ revoked_at: this.knex.raw('COALESCE(revoked_at, ?)', [this.options.clock()]) })
      .returning(['id', 'revoked_at'])) as Array<{ id: string; revoked_at: Date }>;
    if (!row) throw new AppError('invalid_token');
    return { session_id: row.id, revoked_at: row.revoked_at.toISOString() };
  }

  /** Ends every live session of an account, sign-in and exchanged alike (PATs stay: they are revoked one by one). */
  async revokeAllSessions(accountId: string): Promise<SessionsRevoked> {
    const revoked = await this.knex('api_tokens')
      .where({ account_id: accountId, kind: 'session' })
      .whereNull('revoked_at')
      .update({ revoked_at: this.options.clock() });
    return { account_id: accountId, revoked };
  }
}

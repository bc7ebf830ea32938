/**
 * Sign-in and sessions. A server-issued nonce (single use, 10 minutes) goes into a SIWE or SIWS message;
 * `init` verifies it, consumes the nonce atomically (a replay finds it used), creates the account and its
 * first agent (with its own Treasury account) on first sign-in, and issues an `as_` session that expires.
 * A SIWE sign-in may carry a SIWS attestation of the same seed's Solana key (same nonce): both identities
 * are then the same account's, so `xx init --chain solana` later lands there; an identity is one account's
 * for ever (PRIMARY KEY (chain, address) of `identities`), and a pair of two accounts is refused.
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
import { verifySiwe, type VerifiedSignIn } from '../identity/sign-in-message.js';
import type { InitBody } from '../identity/sign-in-body.js';
import { verifySiws } from '../identity/siws-attestation.js';
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

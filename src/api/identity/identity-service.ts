/**
 * Sign-in and sessions. A server-issued nonce (single use, 10 minutes) goes into a SIWE or SIWS message;
 * `init` verifies it, consumes the nonce atomically (a replay finds it used), creates the account and its
 * first agent (with its own Treasury account) on first sign-in, and issues an `as_` session that expires —
 * after the session TTL, or at the signed message's Expiration Time when that is sooner (of the SIWE message
 * and of its SIWS attestation alike): a sign-in never outlives the message the owner signed.
 * A SIWE sign-in may carry a SIWS attestation of the same seed's Solana key (same nonce): both identities
 * are then the same account's, so `xx init --chain solana` later lands there; an identity is one account's
 * for ever (PRIMARY KEY (chain, address) of `identities`), and a pair of two accounts is refused.
 * `exchangePat` turns an agent PAT into a session bound to that agent and that PAT (`pat_exchange`: it
 * acts as the agent, never as the owner — session-powers.ts — and expires no later than the PAT; at most
 * MAX_LIVE_EXCHANGED_SESSIONS live per PAT). `logout` ends the caller's session; `revokeAllSessions` ends
 * every session of an account; both end every credential made within those sessions (revoke-lineage.ts).
 */
import { randomBytes } from 'node:crypto';
import { requireBoundChild } from '../auth/lineage-parent.js';
import { TOKEN_PREFIXES, generateId, generateToken, hashToken } from '../auth/token-codec.js';
import type { Principal } from '../auth/principal.js';
import type { StoreUnit } from '../db/store-unit.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { AgentService } from '../platform/agent-service.js';
import { signInAuthority } from '../platform/sign-in-authority.js';
import type { IdentityKey, IdentityStore } from './store/identity-store.js';

/** A SIWE sign-in's message and signature as the owner sent them. */
type SignInProof = { message: string; signature: string };
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

export interface IdentityServiceDeps {
  store: IdentityStore;
  /** A first sign-in's agent, spawned in the sign-in's unit of work (the platform wing). */
  agents: Pick<AgentService, 'spawnIn' | 'firstOf'>;
  metrics: Pick<TreasuryMetrics, 'tokensIssued'>;
  options: {
    publicUrl: string;
    sessionTtlSeconds: number;
    clock: () => Date;
    evmChainIds: readonly number[];
  };
}

export class IdentityService {
  private readonly store: IdentityStore;
  private readonly options: IdentityServiceDeps['options'];

  constructor(private readonly deps: IdentityServiceDeps) {
    this.store = deps.store;
    this.options = deps.options;
  }

  /**
   * A fresh nonce; each issue also purges up to NONCE_PURGE_BATCH used or expired ones, so the table holds
   * the live nonces and little else (their number bounded by the per-address nonce limit).
   */
  async issueNonce(): Promise<IdentityNonce> {
    const nonce = randomBytes(16).toString('hex');
    const now = this.options.clock();
    const expiresAt = new Date(now.getTime() + NONCE_TTL_SECONDS * 1000);
    await this.store.insertNonce(nonce, expiresAt);
    await this.purgeDeadNonces(now);
    return { nonce, expires_at: expiresAt.toISOString() };
  }

  /**
   * Deletes up to `limit` nonces that can no longer sign anyone in (used, or expired at `now`); rows another
   * purge or a sign-in holds are skipped, never waited for. Returns how many were deleted.
   */
  async purgeDeadNonces(now: Date, limit = NONCE_PURGE_BATCH): Promise<number> {
    return this.store.purgeDeadNonces(now, limit);
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
    const key = (v: VerifiedSignIn): IdentityKey => ({
      chain: v.chain,
      address: v.chain === 'evm' ? v.address.toLowerCase() : v.address,
    });
    const proven = [key(primary), ...(linked ? [key(linked)] : [])];

    // The sign-in's own proof (SIWE, or SIWS with its base58 signature): kept with its session, it names the
    // owner to the signer (../platform/sign-in-authority.ts).
    const proof = { message: input.message, signature: input.signature };
    // The session ends no later than any message signed for it says (its Expiration Time).
    const ends = [primary.expiresAt, linked?.expiresAt].filter((d): d is Date => d instanceof Date);
    const notAfter = ends.length > 0 ? new Date(Math.min(...ends.map((d) => d.getTime()))) : null;
    const session = await this.store.inUnit((unit) =>
      this.signIn(unit, { nonce: primary.nonce, proof, notAfter }, proven, now),
    );
    this.deps.metrics.tokensIssued.inc({ kind: 'session' });
    return session;
  }

  /**
   * The sign-in's writes, in one unit: the nonce used, the identities linked, the account and agent (its
   * Treasury account under the owner the sign-in's own proof names: ../platform/sign-in-authority.ts), the session.
   */
  private async signIn(
    unit: StoreUnit,
    signIn: { nonce: string; proof: SignInProof | null; notAfter: Date | null },
    proven: IdentityKey[],
    now: Date,
  ): Promise<SessionGrant> {
    if (!(await this.store.consumeNonce(unit, signIn.nonce, now))) throw new AppError('sign_in_nonce_invalid');
    // One lock per identity, always taken in the same order, so two sign-ins naming the same pair wait in turn.
    const lockKey = (id: IdentityKey) => `identity:${id.chain}:${id.address}`;
    await this.store.lockIdentities(
      unit,
      [...proven].sort((a, b) => (lockKey(a) < lockKey(b) ? -1 : lockKey(a) > lockKey(b) ? 1 : 0)),
    );
    const known = await this.store.findIdentities(unit, proven);
    const accountIds = [...new Set(known.map((r) => r.account_id))];
    if (accountIds.length > 1) {
      const other = known.find((r) => r.chain === 'solana') ?? known[known.length - 1]!;
      throw new AppError('identity_already_linked', { fields: { chain: other.chain, address: other.address } });
    }
    const created = accountIds.length === 0;
    const accountId = created ? generateId('acc_') : accountIds[0]!;
    if (created) await this.store.createAccount(unit, accountId, now);
    for (const [i, id] of proven.entries()) {
      if (known.some((r) => r.chain === id.chain && r.address === id.address)) {
        await this.store.touchIdentity(unit, id, now);
        continue;
      }
      // The identity that signed in to a new account is its own; any other was linked to the account.
      const linkedAt = created && i === 0 ? null : now;
      if (!(await this.store.linkIdentity(unit, id, accountId, { now, linkedAt })))
        throw new AppError('identity_already_linked', { fields: { chain: id.chain, address: id.address } });
    }
    if (created) {
      const authority = signInAuthority(signIn.proof ?? undefined);
      await this.deps.agents.spawnIn(unit, accountId, { label: 'default', authority }, now);
    }
    const agentId = await this.deps.agents.firstOf(unit, accountId);
    const session = await this.issueSession(
      unit,
      { accountId, origin: 'sign_in', proof: signIn.proof, notAfter: signIn.notAfter },
      now,
    );
    return { ...session, account_id: accountId, agent_id: agentId, created };
  }

  /**
   * A sign-in session is scoped to the account (a root) and ends after the session TTL or at `notAfter` (the
   * signed message's Expiration Time), whichever is first; an exchanged one to its agent, naming its PAT as
   * parent, with the expiry credential-lineage.ts bounded.
   */
  private async issueSession(
    unit: StoreUnit,
    from:
      | { accountId: string; origin: 'sign_in'; proof: SignInProof | null; notAfter: Date | null }
      | { accountId: string; origin: 'pat_exchange'; agentId: string; patId: string; expiresAt: Date },
    now: Date,
  ): Promise<{ session: string; expires_at: string }> {
    const session = generateToken(TOKEN_PREFIXES.session);
    const ttlEnd = new Date(now.getTime() + this.options.sessionTtlSeconds * 1000);
    const expiresAt =
      from.origin === 'pat_exchange'
        ? from.expiresAt
        : from.notAfter !== null && from.notAfter < ttlEnd
          ? from.notAfter
          : ttlEnd;
    const exchanged = from.origin === 'pat_exchange';
    await this.store.insertSession(unit, {
      id: generateId('ses_'),
      tokenHash: hashToken(session),
      scopeType: exchanged ? 'agent' : 'account',
      scopeId: exchanged ? from.agentId : from.accountId,
      accountId: from.accountId,
      origin: from.origin,
      parentId: exchanged ? from.patId : null,
      createdBy: exchanged ? from.patId : from.accountId,
      createdAt: now,
      expiresAt,
      signInProof: from.origin === 'sign_in' ? from.proof : null,
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
    const agent = await this.store.agent(principal.scopeId);
    if (!agent) throw new AppError('invalid_token');
    const now = this.options.clock();
    const { ended, ...session } = await this.store.inUnit(async (unit) => {
      // Under the PAT's row lock: a revocation committed first is seen here, one committed after revokes this
      // session too; two exchanges of one PAT take turns, so the bound below holds.
      if (!(await this.store.lockCredential(unit, principal.tokenId))) throw new AppError('invalid_token');
      const parent = await this.store.parentOf(unit, principal.tokenId, now);
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
        unit,
        {
          accountId: agent.account_id,
          origin: 'pat_exchange',
          agentId: agent.id,
          patId: principal.tokenId,
          expiresAt: child.expiresAt!,
        },
        now,
      );
      return { ...issued, ended: await this.endOldestExchanged(unit, principal.tokenId, now) };
    });
    this.deps.metrics.tokensIssued.inc({ kind: 'session' });
    return { ...session, account_id: agent.account_id, agent_id: agent.id, created: false, ended };
  }

  /** Revokes the live sessions of a PAT beyond the newest MAX_LIVE_EXCHANGED_SESSIONS; returns their ids. */
  private async endOldestExchanged(unit: StoreUnit, patId: string, now: Date): Promise<string[]> {
    const stale = await this.store.liveSessionsBeyond(unit, patId, now, MAX_LIVE_EXCHANGED_SESSIONS);
    return this.store.revokeTree(unit, stale, now);
  }

  /** Ends one session (the caller's own) and every credential made within it; idempotent. */
  async logout(sessionId: string): Promise<LoggedOut & { ended: string[] }> {
    return this.store.inUnit(async (unit) => {
      const row = await this.store.endSession(unit, sessionId, this.options.clock());
      if (!row) throw new AppError('invalid_token');
      const ended = await this.store.revokeTree(unit, [row.id], row.revoked_at);
      return { session_id: row.id, revoked_at: row.revoked_at.toISOString(), ended };
    });
  }

  /**
   * Ends every live session of an account, sign-in and exchanged alike, and every credential made within
   * them (src/api/auth/revoke-lineage.ts), in one unit of work. PATs the owner minted with a sign-in session
   * are roots of the account, not the session's children: they stay (revoked one by one with DELETE
   * /v1/pats/{id}).
   */
  async revokeAllSessions(accountId: string): Promise<SessionsRevoked & { ended: string[] }> {
    return this.store.inUnit(async (unit) => {
      const now = this.options.clock();
      const live = await this.store.unrevokedSessionsOf(unit, accountId);
      const ended = await this.store.revokeTree(unit, live, now);
      return { account_id: accountId, revoked: live.length, ended };
    });
  }
}

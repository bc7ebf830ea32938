/**
 * What an account session (`as_…`) may do, decided in one place. Every route that takes a session calls
 * `requireSession` (routes for sessions only) or `requireSessionPower` (routes that also take another
 * bearer, such as a seller's service PAT) with the power it needs:
 * - `owner`: money control — minting, listing, revoking or changing PATs (a daily cap too), service PATs,
 *   spawning or listing agents, payout flushes, ending the account's sessions — and managing the account's
 *   sellers: registering one (its answer carries a service PAT), its profile (origin, OpenAPI URL, payout
 *   mode), banking, endpoints and prices, suspend and resume, origin verification and OpenAPI refresh.
 * - `account`: reading the account's sellers — the list, a profile, banking, pay-to, payouts, endpoints,
 *   discovery, the origin-verification token — and their ledger (payers, revenue, export).
 * - `self`: ending the caller's own session. Any session has it.
 * A session from a SIWE / SIWS sign-in is the owner and holds every power. A credential never outranks what
 * made it (docs/security-model.md, "Credential lineage"): a session exchanged from a PAT holds at most what
 * that PAT holds, and the only PAT that can be exchanged is an agent PAT (identity-service.ts), which no
 * seller route and no owner route takes — so an exchanged session holds `self` only, and `owner` or
 * `account` answers 403 `fresh_sign_in_required`. It otherwise acts as its agent (agent routes, wallet reads
 * and payments), as its PAT does, which `agentBinding` in authenticator.ts gives it; the route catalogue marks
 * `owner` and `account` routes `owner_session`, or `owner_session_or_service` where the seller's service PAT
 * is admitted too.
 *
 * Defends: an agent holding only its PAT cannot turn it into the owner's powers by exchanging it (lift its own
 * cap, mint a Treasury PAT, rewrite who may spend, reprice, suspend or repoint the owner's sellers, read the
 * owner's sellers, payers, revenue, banking and payouts). Does not defend: a stolen sign-in session, which is
 * the owner; a seller's service PAT, which manages its own seller (docs/security-model.md, "Who may call what").
 */
import { AppError } from '../errors/app-error.js';
import type { Principal, SessionOrigin } from './principal.js';

export type SessionPower = 'owner' | 'account' | 'self';

/** What a session exchanged from an agent PAT holds: what that PAT holds on session routes, its own logout aside. */
const EXCHANGED_POWERS: ReadonlySet<SessionPower> = new Set(['self']);

export interface SessionCaller {
  accountId: string;
  sessionId: string;
  origin: SessionOrigin;
  /** The agent an exchanged session acts as; null for a sign-in session. */
  agentId: string | null;
}

/** The calling session and its platform account, or a 403: a PAT, or an exchanged session asking for more than `self`. */
export function requireSession(principal: Principal, power: SessionPower): SessionCaller {
  if (
    principal.kind !== 'token' ||
    principal.tokenKind !== 'session' ||
    !principal.accountId ||
    principal.sessionOrigin === null
  ) {
    throw new AppError('insufficient_scope', {
      message: 'This route needs an account session (as_…); run `xx init` to sign in.',
    });
  }
  const agentId = principal.sessionOrigin === 'pat_exchange' ? principal.scopeId : null;
  if (principal.sessionOrigin !== 'sign_in' && !EXCHANGED_POWERS.has(power)) {
    throw new AppError('fresh_sign_in_required', {
      fields: { session_origin: principal.sessionOrigin, agent_id: agentId },
    });
  }
  return { accountId: principal.accountId, sessionId: principal.tokenId, origin: principal.sessionOrigin, agentId };
}

/**
 * For a route that admits other bearers beside sessions (a seller's service PAT): a session must hold `power`
 * (as `requireSession`); any other bearer is left to the route's own scope check.
 */
export function requireSessionPower(principal: Principal, power: SessionPower): void {
  if (principal.kind === 'token' && principal.tokenKind === 'session') requireSession(principal, power);
}

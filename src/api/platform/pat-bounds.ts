/**
 * The bound on live PATs (TREASURY_MAX_PATS_PER_ACCOUNT): how many PATs that are neither revoked, expired
 * nor spent (a used single-use PAT) one holder may have. The holder is the platform account a PAT belongs to —
 * every PAT minted on /v1/pats (roots, `within_session` and `parent_pat_id` children), a seller's service
 * PATs, the Treasury PATs of an agent's Treasury account — or, for a Treasury PAT of an operator-minted account
 * (no platform account: `account_id` NULL), that Treasury account itself.
 *
 * Defends: a tenant minting PATs without end — the rate limiter keys its buckets by token id, so every new
 * PAT would be a fresh allowance and rows in `rate_limits`. The count is read under a transaction-scoped
 * advisory lock on the holder, held until the new PAT's row commits (./store/pg-pat-counts.ts), so concurrent
 * mints cannot overshoot. This file holds the rule (pure).
 * Does not defend: sessions (an exchange keeps at most MAX_LIVE_EXCHANGED_SESSIONS live per PAT:
 * src/api/identity/identity-service.ts; sign-in sessions are bounded by the sign-in rate limit and their TTL).
 */
import { AppError } from '../errors/app-error.js';

/** Whose live PATs a new PAT counts against (see the header). */
export type PatHolder = { kind: 'account'; accountId: string } | { kind: 'treasury'; treasuryAccountId: string };

/** Throws 409 `pat_limit_reached` when one more live PAT would pass the bound. */
export function refuseOverPatBound(live: number, limit: number): void {
  if (live >= limit) throw new AppError('pat_limit_reached', { fields: { limit } });
}

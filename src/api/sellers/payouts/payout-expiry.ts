/**
 * When a submitted payout may be judged expired (./seller-payouts.ts): once this host's clock, read before the
 * chain is, is more than `PAYOUT_EXPIRY_GRACE_SECONDS` past the authorization's `validBefore`. Only then does
 * a chain read that finds the authorization unused mean it can never move money, so that the payout may turn
 * `failed` and its amount be given back (and paid anew).
 *
 * Defends: paying twice because an authorization submitted near its expiry was judged on this host's clock
 * alone — the token accepts it in any block stamped before `validBefore`, and such a block may reach the RPC
 * endpoint after this host's clock passed `validBefore` (this host's clock ahead of the chain's, the endpoint
 * some blocks behind the head, a block near the boundary replaced by a short reorganisation).
 * Does not defend: a host clock more than the grace behind real time, an RPC endpoint more than the grace
 * behind the head, or a reorganisation deeper than the grace (the chain read is then wrong, and so is the
 * judgement).
 */

/**
 * How long after `validBefore` a submitted payout still counts as possibly moving (s). Longer than the expired
 * reservations' grace (60 s, ../../pay/expired-reservation-sweeper.ts), which guards only a cap's headroom:
 * here a wrong judgement pays a seller twice, while a longer wait only delays a payout that never moved.
 */
export const PAYOUT_EXPIRY_GRACE_SECONDS = 300;

/** Whether an authorization valid before `validBefore` (unix seconds) is past its grace at `now`. */
export function isPayoutExpired(validBefore: string | bigint, now: Date): boolean {
  const deadlineMs = (BigInt(validBefore) + BigInt(PAYOUT_EXPIRY_GRACE_SECONDS)) * 1000n;
  return BigInt(now.getTime()) > deadlineMs;
}

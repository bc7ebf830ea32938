/**
 * One seller's share of a purchase store: at most MAX_LIVE_PURCHASES_PER_ORIGIN live purchases — begun, or signed
 * and not yet taken by the seller — paid to one origin (scheme, host and port of the URL the payment goes to).
 * A signed payment the seller neither takes nor refuses after settling stays in the store until it can no longer
 * settle (x402-purchase.ts), and Treasury signs it for as long as the seller's `maxTimeoutSeconds` asks (up to
 * a day): a seller pricing at one raw unit that answers every paid retry with a 402 would otherwise fill the
 * store (1,024 purchases in memory, 256 in `xx buy`'s files), and every purchase from any seller would be
 * refused until they expire. Both stores (purchase-store.ts, file-purchase-store.ts) call `assertOriginHasRoom`
 * when a purchase is opened, before anything is signed: a new purchase to an origin at the bound is
 * PurchaseOriginLimitError; that origin's live purchases are still resumed, and other origins are not touched.
 *
 * Defends against: one origin filling the store for every other. Does not defend against: one seller spread over
 * many origins (each its own share, within the store's overall bound); a caller's own store (it keeps what it
 * likes); records kept before the origin was recorded (they count toward no origin, and expire).
 */
import { PurchaseOriginLimitError } from './purchase-errors.js';

/** What the bound reads of a stored purchase (purchase-store.ts's StoredPurchase has these fields). */
export interface OriginBoundRecord {
  origin?: string | undefined;
  /** Set once the purchase's payment is signed. */
  signed?: unknown;
  /** Unix ms after which the record is no longer live. */
  expiresAt: number;
}

/** The most live purchases a store holds paid to one origin. */
export const MAX_LIVE_PURCHASES_PER_ORIGIN = 16;

/**
 * Throws PurchaseOriginLimitError when `record` opens a purchase (nothing signed yet) to an origin that already
 * holds MAX_LIVE_PURCHASES_PER_ORIGIN of the `records` still alive at `now` (unix ms). Called only for a key the
 * store holds no live record under: writing a purchase's signed payment, or updating it, is never refused here.
 */
export function assertOriginHasRoom(
  records: Iterable<OriginBoundRecord>,
  record: OriginBoundRecord,
  now: number,
): void {
  const { origin } = record;
  if (origin === undefined || record.signed) return;
  let live = 0;
  let firstExpiry = Infinity;
  for (const r of records)
    if (r.origin === origin && r.expiresAt > now) {
      live++;
      firstExpiry = Math.min(firstExpiry, r.expiresAt);
    }
  if (live >= MAX_LIVE_PURCHASES_PER_ORIGIN)
    throw new PurchaseOriginLimitError(origin, MAX_LIVE_PURCHASES_PER_ORIGIN, firstExpiry);
}

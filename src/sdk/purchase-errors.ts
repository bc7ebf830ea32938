/**
 * The errors of a purchase kept between attempts (x402-purchase.ts), and of a self-custody Solana purchase
 * whose entry is on another cluster than the buyer's Solana RPC (local-solana-payer.ts). All are raised before
 * anything new is signed or sent: `PurchaseTermsChangedError` when a purchase that already signed its payment
 * meets a seller that no longer offers those terms, `PurchaseRequestMismatchError` when a purchase is resumed
 * on another request (method or URL) than the one it was made for, `PurchaseStoreError` when the purchase store
 * cannot be read or written, `PurchaseOriginLimitError` when the store already holds its bound of live purchases
 * paid to the origin of a new one (purchase-origin-bound.ts), `SolanaClusterMismatchError` when the entry names
 * another network than the cluster the RPC serves, `SolanaRpcUnreachableError` when the RPC does not say which
 * cluster it serves.
 */
import { TreasurySdkError } from './sdk-errors.js';

/**
 * The purchase already signed a payment for terms the seller no longer offers (or Treasury holds its
 * identifier for other terms: `payment_identifier_conflict`). Nothing new was signed: the earlier payment
 * may still settle until it expires. To pay the new terms, start a new purchase (another purchase key or id).
 */
export class PurchaseTermsChangedError extends TreasurySdkError {
  constructor(
    readonly paymentId: string,
    cause?: unknown,
  ) {
    super(
      'purchase_terms_changed',
      `Purchase ${paymentId} already signed a payment for other terms than the seller asks now; nothing new was signed. Start a new purchase to pay these terms.`,
      { details: { payment_id: paymentId }, cause },
    );
  }
}

/**
 * The purchase key or payment id names a purchase made for another request (method and URL) — or one kept
 * before purchases were tied to their request, which cannot be told apart. Nothing was sent to this URL: a
 * purchase's payment goes only to the request it was made for. Resume it there, or start a new purchase.
 */
export class PurchaseRequestMismatchError extends TreasurySdkError {
  constructor(
    readonly paymentId: string,
    unbound: boolean,
  ) {
    super(
      'purchase_request_mismatch',
      unbound
        ? `Purchase ${paymentId} was kept before purchases were tied to their URL and is not resumed on any; nothing was sent. It is forgotten when its payment expires; start a new purchase to pay now.`
        : `Purchase ${paymentId} was made for another URL or method; its payment is not sent here and nothing was sent. Resume it on its own URL, or start a new purchase.`,
      { details: { payment_id: paymentId, unbound } },
    );
  }
}

/** The purchase store could not keep or read a purchase; nothing new was signed or sent. */
export class PurchaseStoreError extends TreasurySdkError {
  constructor(detail: string, cause?: unknown) {
    super('purchase_store_unavailable', `The purchase store ${detail}; nothing new was signed or sent.`, { cause });
  }
}

/**
 * The purchase store already holds `limit` live purchases paid to `origin` — begun, or signed and not taken by its
 * seller — so a new one there is refused (purchase-origin-bound.ts); nothing was signed or sent to pay it.
 * Purchases to other origins are not affected. Retry one of that origin's purchases (its purchase key or id), or
 * start a new one after `retryAt` (unix ms), when the first of them can no longer settle and is forgotten.
 */
export class PurchaseOriginLimitError extends TreasurySdkError {
  constructor(
    readonly origin: string,
    readonly limit: number,
    readonly retryAt: number,
  ) {
    super(
      'purchase_origin_limit_reached',
      `The purchase store holds ${limit} live purchases paid to ${origin} that its seller has not taken; nothing was signed or sent. Retry one of them, or start a new purchase there after ${new Date(retryAt).toISOString()}.`,
      { details: { origin, limit, retry_at: new Date(retryAt).toISOString() } },
    );
  }
}

/**
 * A self-custody Solana entry is on another network than the cluster the buyer's Solana RPC serves (`solana:`
 * and the first 32 characters of its genesis hash). A Solana transaction names no cluster: one built from that
 * RPC would land on the RPC's cluster whatever the entry says, so nothing was signed. Pay on `rpc_network`, or
 * give `solanaRpcUrl` an endpoint of `network`.
 */
export class SolanaClusterMismatchError extends TreasurySdkError {
  constructor(
    readonly network: string,
    readonly rpcNetwork: string,
  ) {
    super(
      'solana_cluster_mismatch',
      `The seller's entry is on ${network}, but the Solana RPC serves ${rpcNetwork}; nothing was signed.`,
      { details: { network, rpc_network: rpcNetwork } },
    );
  }
}

/**
 * The buyer's Solana RPC did not say which cluster it serves (`getGenesisHash` failed, timed out or answered
 * something else), so no entry can be bound to it; nothing was signed. `rpc` is the endpoint's scheme and host
 * only (a provider's key in its path or query is never shown).
 */
export class SolanaRpcUnreachableError extends TreasurySdkError {
  constructor(
    readonly rpc: string,
    cause: unknown,
  ) {
    super(
      'solana_rpc_unreachable',
      `The Solana RPC at ${rpc} did not say which cluster it serves; nothing was signed.`,
      {
        details: { rpc },
        cause,
      },
    );
  }
}

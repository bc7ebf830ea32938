/**
 * What makes two `xx buy` runs the same purchase, and where the CLI keeps it: the purchase key is the SHA-256
 * of the method, the URL, the SHA-256 of the body, the `--network` named and the payer (the managed wallet's
 * id, or the self-custody keystore's addresses) — the same command retried gets the same key. The purchases
 * live under the CLI's state directory (`<XX_HOME>/purchases/`, one 0600 file per purchase in a 0700 directory,
 * at most MAX_CLI_PURCHASES) in the buyer SDK's file store (src/sdk/file-purchase-store.ts), which keeps each
 * purchase's x402 `payment-identifier` and signed payment until the seller takes it or it expires — at most
 * MAX_LIVE_PURCHASES_PER_ORIGIN of them per seller origin (src/sdk/purchase-origin-bound.ts: past it a new
 * purchase there is `purchase_origin_limit_reached`, nothing signed; other sellers are still paid).
 *
 * Defends against: `xx buy` retried after a lost answer, a time-out or a crash paying twice — the retry within
 * the payment's validity sends the same payment (a managed wallet's Treasury answers the same identifier with
 * the authorization it recorded); `--new-purchase` forgets the stored purchase first, for a second, deliberate
 * purchase of the same thing. Does not defend against: the same purchase from two machines or two XX_HOMEs,
 * or the same resource bought with a different body, header order aside (headers are not part of the key).
 */
import { createHash } from 'node:crypto';
import { filePurchaseStore, type PurchaseStore, type PurchaseTermsChangedError } from '../../../sdk/index.js';
import { CliError } from '../../core/cli-error.js';
import type { CliContext } from '../../core/cli-context.js';

/** The most purchases the CLI keeps unsettled at once (expired ones are removed first). */
export const MAX_CLI_PURCHASES = 256;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The CLI's purchase store (`<XX_HOME>/purchases/`). */
export function cliPurchaseStore(ctx: Pick<CliContext, 'paths'>): PurchaseStore {
  return filePurchaseStore({ dir: ctx.paths.purchasesDir, maxPurchases: MAX_CLI_PURCHASES });
}

/** The purchase key of an `xx buy` command line: `xx-buy:` + 64 hex. */
export function buyPurchaseKey(request: {
  method: string;
  url: string;
  body: string | undefined;
  network: string | undefined;
  payer: string;
}): string {
  const identity = JSON.stringify([
    request.method,
    request.url,
    request.body === undefined ? null : sha256(request.body),
    request.network ?? null,
    request.payer,
  ]);
  return `xx-buy:${sha256(identity)}`;
}

/** A stored purchase whose terms the seller no longer offers: nothing new signed; `--new-purchase` pays the new ones. */
export function purchaseTermsChanged(err: PurchaseTermsChangedError): CliError {
  return new CliError({
    code: err.code,
    userMessage: `${err.message} Run the same xx buy with --new-purchase to pay the new terms.`,
    details: { payment_id: err.paymentId },
    recovery: { kind: 'new_purchase', cli_flag: '--new-purchase' },
  });
}

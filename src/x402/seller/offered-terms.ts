/**
 * Which networks a paid route is offered on, per request (rule 2 of ./paid-request.ts): the EVM entries while
 * an EVM facilitator is configured (or local-only mode is on), at the platform's collection address for a
 * merchant-of-record seller; the Solana entry while the Solana facilitator names a fee payer
 * (./solana-terms.ts) — but not for a merchant-of-record seller, whose buyers pay the platform, and the platform
 * collects on its EVM network only. Nothing offered: undefined (the paywall answers 503).
 *
 * Defends against: a challenge offering a network no facilitator can settle on, or a Solana address that
 * would take a merchant-of-record seller's payments away from the platform. Does not defend against: a
 * facilitator that goes down after the challenge (the payment is then refused with a 402).
 */
import type { PaidRequestDeps, PaidSite } from './paid-request-port.js';
import { buildRouteTerms, type RouteTerms } from './payment-terms.js';
import type { SellerState } from './seller-identity.js';
import type { ResolvedX402Config } from './seller-options.js';

export async function offeredTerms(
  deps: Pick<PaidRequestDeps, 'facilitator' | 'solanaFacilitator'>,
  site: Pick<PaidSite, 'solana'>,
  config: ResolvedX402Config,
  href: string,
  price: bigint,
  seller: Exclude<SellerState, { kind: 'misconfigured' }>,
): Promise<RouteTerms | undefined> {
  const collectTo = seller.kind === 'verified' ? seller.payTo : undefined;
  const evmPayTo = collectTo ?? config.payTo;
  const evmUsable = evmPayTo !== undefined && (deps.facilitator !== undefined || config.allowLocalOnly);
  const solana = collectTo === undefined && deps.solanaFacilitator ? await site.solana?.current() : undefined;
  if (!evmUsable && !solana) return undefined;
  return buildRouteTerms(config, href, price, evmUsable ? evmPayTo : undefined, solana);
}

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
import type { SolanaTermsNow } from './solana-terms.js';

/** The EVM pay-to of the challenge: the platform's collection address for a merchant-of-record seller. */
export function collectTo(seller: Exclude<SellerState, { kind: 'misconfigured' }>): `0x${string}` | undefined {
  return seller.kind === 'verified' ? seller.payTo : undefined;
}

/** The Solana terms offered now (none for a merchant-of-record seller, or without a Solana facilitator). */
export async function solanaNow(
  deps: Pick<PaidRequestDeps, 'solanaFacilitator'>,
  site: Pick<PaidSite, 'solana'>,
  seller: Exclude<SellerState, { kind: 'misconfigured' }>,
): Promise<SolanaTermsNow | undefined> {
  return collectTo(seller) === undefined && deps.solanaFacilitator ? await site.solana?.current() : undefined;
}

/** The terms offered, given the Solana terms of `solanaNow`. */
export function offeredTermsWith(
  deps: Pick<PaidRequestDeps, 'facilitator'>,
  config: ResolvedX402Config,
  href: string,
  price: bigint,
  seller: Exclude<SellerState, { kind: 'misconfigured' }>,
  solana: SolanaTermsNow | undefined,
): RouteTerms | undefined {
  const evmPayTo = collectTo(seller) ?? config.payTo;
  const evmUsable = evmPayTo !== undefined && (deps.facilitator !== undefined || config.allowLocalOnly);
  if (!evmUsable && !solana) return undefined;
  return buildRouteTerms(config, href, price, evmUsable ? evmPayTo : undefined, solana);
}

export async function offeredTerms(
  deps: Pick<PaidRequestDeps, 'facilitator' | 'solanaFacilitator'>,
  site: Pick<PaidSite, 'solana'>,
  config: ResolvedX402Config,
  href: string,
  price: bigint,
  seller: Exclude<SellerState, { kind: 'misconfigured' }>,
): Promise<RouteTerms | undefined> {
  return offeredTermsWith(deps, config, href, price, seller, await solanaNow(deps, site, seller));
}

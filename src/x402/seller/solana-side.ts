/**
 * The Solana side of a paywall (the Koa middleware's, the gate's): the Solana offer's facilitator (its object,
 * wrapped, or a client of its URL, with the paywall's time-outs) and the terms it names (./solana-terms.ts).
 * Nothing when the seller does not sell on Solana. Defends nothing by itself: it wires what
 * ./solana-offer.ts validated.
 */
import type { FetchLike } from '../bounded-fetch.js';
import { resolveFacilitator, type FacilitatorClient } from '../facilitator-client.js';
import type { ResolvedX402Config, X402KoaOptions, X402Logger } from './seller-options.js';
import { SolanaTerms } from './solana-terms.js';

export function solanaSide(
  options: Pick<X402KoaOptions, 'solana'>,
  config: ResolvedX402Config,
  fetch: FetchLike,
  logger: X402Logger,
): { facilitator: FacilitatorClient; terms: SolanaTerms } | undefined {
  if (!config.solana) return undefined;
  const facilitator = resolveFacilitator(
    options.solana?.facilitator,
    {
      facilitatorUrl: config.solana.facilitatorUrl,
      verifyTimeoutMs: config.verifyTimeoutMs,
      settleTimeoutMs: config.settleTimeoutMs,
    },
    fetch,
  );
  if (!facilitator) return undefined; // not reached: the offer's check requires a facilitator
  return { facilitator, terms: new SolanaTerms(config.solana, facilitator, logger) };
}

/**
 * The Solana side of a paywall (the Koa middleware's, the gate's): the Solana facilitator (an object, wrapped,
 * or a client of its URL, with the paywall's time-outs), whose `GET /supported` answer is shared by every site
 * that sells through it (kept 10 minutes when good, asked again after 5 s when not, one call in flight), and
 * the per-offer terms it names (./solana-terms.ts).
 *
 * Defends against: one `/supported` call per seller and per request (the gate sells many sellers through one
 * facilitator). Does not defend against: a facilitator that changes its fee payer within the cache's lifetime.
 */
import type { FetchLike } from '../bounded-fetch.js';
import {
  resolveFacilitator,
  type FacilitatorClient,
  type FacilitatorLike,
  type SupportedOutcome,
} from '../facilitator-client.js';
import type { ResolvedX402Config } from './seller-options.js';
import type { ResolvedSolanaOffer } from './solana-offer.js';
import { SolanaTerms } from './solana-terms.js';
import type { X402KoaOptions, X402Logger } from './x402-koa-options.js';

/** `client` with its `supported()` answer shared and cached (see the header). */
export function withSharedSupported(client: FacilitatorClient, clock: () => number = Date.now): FacilitatorClient {
  let cached: { outcome: SupportedOutcome; until: number } | undefined;
  let inFlight: Promise<SupportedOutcome> | undefined;
  return {
    url: client.url,
    verify: (request) => client.verify(request),
    settle: (request) => client.settle(request),
    supported() {
      if (cached && clock() < cached.until) return Promise.resolve(cached.outcome);
      inFlight ??= client.supported().then((outcome) => {
        cached = { outcome, until: clock() + (outcome.kind === 'ok' ? 600_000 : 5_000) };
        inFlight = undefined;
        return outcome;
      });
      return inFlight;
    },
  };
}

/** The Solana facilitator of `offer` (its object or URL), with the shared `/supported` answer. */
export function solanaFacilitatorOf(
  object: FacilitatorLike | undefined,
  facilitatorUrl: string | undefined,
  timeouts: { verifyTimeoutMs: number; settleTimeoutMs: number },
  fetch: FetchLike | undefined,
): FacilitatorClient | undefined {
  const { verifyTimeoutMs, settleTimeoutMs } = timeouts;
  const client = resolveFacilitator(object, { facilitatorUrl, verifyTimeoutMs, settleTimeoutMs }, fetch);
  return client && withSharedSupported(client);
}

/** The Koa middleware's Solana side, when it sells on Solana. */
export function solanaSide(
  options: Pick<X402KoaOptions, 'solana'>,
  config: ResolvedX402Config,
  fetch: FetchLike | undefined,
  logger: X402Logger,
): { facilitator: FacilitatorClient; terms: SolanaTerms } | undefined {
  const offer: ResolvedSolanaOffer | undefined = config.solana;
  if (!offer) return undefined;
  const facilitator = solanaFacilitatorOf(options.solana?.facilitator, offer.facilitatorUrl, config, fetch);
  if (!facilitator) return undefined; // not reached: the offer's check requires a facilitator
  return { facilitator, terms: new SolanaTerms(offer, facilitator, logger) };
}

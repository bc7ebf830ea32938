/**
 * The Solana entry of a route's terms, as the official server builds it: the facilitator's `GET /supported`
 * (cached and shared, ./solana-side.ts) names the fee payer of its `exact` kind on the network, and
 * `@x402/svm`'s server scheme (`ExactSvmScheme.enhancePaymentRequirements`) puts it in `extra.feePayer`. The
 * terms are kept `successTtlMs` (10 minutes); a facilitator that is down or names no fee payer is asked again
 * after `failureCooldownMs` (5 s), and meanwhile the Solana entry is left out of the challenge (a buyer cannot
 * pay without a fee payer). The seller's associated token accounts are derived once.
 *
 * Defends against: a challenge naming a fee payer the facilitator did not advertise; one facilitator outage
 * costing a `/supported` call per request. Does not defend against: a facilitator that changes its fee payer
 * within the cache's lifetime (its buyers' payments are refused by it until the next refresh).
 */
import { ExactSvmScheme } from '@x402/svm/exact/server';
import type { FacilitatorClient } from '../facilitator-client.js';
import type { ResolvedSolanaOffer } from './solana-offer.js';
import { associatedTokenAccounts } from './svm-payment.js';
import type { X402Logger } from './x402-koa-options.js';

/** What the route terms need of the Solana offer at a given moment. */
export interface SolanaTermsNow {
  offer: ResolvedSolanaOffer;
  /** `extra` of the accepts entry (feePayer). */
  extra: Record<string, unknown>;
  /** The seller's associated token accounts for the offer's asset. */
  destinations: readonly string[];
}

export class SolanaTerms {
  private cached: { now: SolanaTermsNow | undefined; until: number } = { now: undefined, until: 0 };
  private inFlight: Promise<SolanaTermsNow | undefined> | undefined;
  private readonly server = new ExactSvmScheme();
  private destinations: Promise<string[]> | undefined;

  constructor(
    private readonly offer: ResolvedSolanaOffer,
    private readonly facilitator: FacilitatorClient,
    private readonly logger: X402Logger,
    private readonly options: { successTtlMs?: number; failureCooldownMs?: number; clock?: () => number } = {},
  ) {}

  /** The Solana terms now, or undefined while the facilitator names no fee payer. */
  async current(): Promise<SolanaTermsNow | undefined> {
    const clock = this.options.clock ?? Date.now;
    if (clock() < this.cached.until) return this.cached.now;
    this.inFlight ??= this.ask().then((now) => {
      const ttl = now ? (this.options.successTtlMs ?? 600_000) : (this.options.failureCooldownMs ?? 5_000);
      this.cached = { now, until: clock() + ttl };
      this.inFlight = undefined;
      return now;
    });
    return this.inFlight;
  }

  private async ask(): Promise<SolanaTermsNow | undefined> {
    const { offer } = this;
    try {
      this.destinations ??= associatedTokenAccounts(offer.payTo, offer.asset);
      const destinations = await this.destinations;
      const supported = await this.facilitator.supported();
      if (supported.kind !== 'ok') {
        this.logger.warn({ cause: supported.cause }, 'x402: the Solana facilitator did not say its fee payer');
        return undefined;
      }
      const kind = supported.supported.kinds.find(
        (k) => k.x402Version === 2 && k.scheme === 'exact' && k.network === offer.network,
      );
      const feePayer = kind?.extra?.feePayer;
      if (!kind || typeof feePayer !== 'string' || !/^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(feePayer)) {
        this.logger.warn({ network: offer.network }, 'x402: the Solana facilitator offers no exact kind here');
        return undefined;
      }
      const enhanced = await this.server.enhancePaymentRequirements(
        {
          scheme: 'exact',
          network: offer.network as `${string}:${string}`,
          asset: offer.asset,
          amount: '0',
          payTo: offer.payTo,
          maxTimeoutSeconds: 0,
          extra: {},
        },
        { x402Version: 2, scheme: 'exact', network: offer.network as `${string}:${string}`, extra: { feePayer } },
        [],
      );
      return { offer, extra: { ...enhanced.extra }, destinations };
    } catch (err) {
      this.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'x402: Solana terms unavailable');
      return undefined;
    }
  }
}

/**
 * The seller behind the middleware's service PAT, as `POST {api_url}/v1/auth/verify` reports it, and the
 * endpoint ledger rows are attributed to (docs/seller-middleware.md#rules-and-runtime-answers): the configured
 * endpoint_id (which must be one of the seller's), else the only endpoint, else — with 2 or more — an
 * `X402ConfigError` listing every (slug, endpoint_id) pair; and, for a `platform_mor` seller, where its buyers
 * pay on the middleware's network (`collect_to`: the collection wallet the platform holds for it).
 *
 * Caching: a good answer is kept `successTtlMs` and then refreshed in the background (callers keep using it);
 * a refusal (401/403, or the endpoint rule failing) is kept `failureCooldownMs`, after which the next paid
 * request asks again; an unreachable platform is retried after the same cooldown, in the background, and
 * meanwhile payments proceed with the configured endpoint_id (or none: the platform then attributes by route).
 * Concurrent callers share one request.
 *
 * Defends against: a seller with a wrong or revoked PAT, or an ambiguous endpoint set, taking payments the
 * platform cannot account for. Does not defend against: a platform outage at the very first paid request
 * delaying it by up to the platform time-out once; payments taken while the platform is unreachable are not
 * checked against the PAT, and — before the first answer — are taken at the configured pay_to even for a
 * `platform_mor` seller (the platform then owes nothing for them: they never reached its collection wallet).
 */
import { z } from 'zod';
import { boundedFetchJson, type FetchLike } from '../bounded-fetch.js';
import type { X402Logger } from './x402-koa-options.js';
import { X402ConfigError } from './x402-config-error.js';

const verifyReplySchema = z
  .object({
    seller_id: z.string().max(64),
    slug: z.string().max(128).optional(),
    status: z.string().max(32).optional(),
    payout_mode: z.string().max(32).optional(),
    /** Where buyers pay when the platform is the seller's merchant of record (absent from older platforms). */
    collect_to: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/)
      .nullable()
      .optional(),
    endpoints: z
      .array(
        z
          .object({
            endpoint_id: z.string().max(64).optional(),
            id: z.string().max(64).optional(),
            slug: z.string().max(128).optional(),
            path: z.string().max(512).optional(),
            method: z.string().max(16).optional(),
          })
          .loose(),
      )
      .max(10_000),
  })
  .loose();

export type SellerState =
  | {
      kind: 'verified';
      sellerId: string;
      endpointId: string | undefined;
      /** The platform's collection address buyers pay instead of the configured pay_to (platform_mor sellers). */
      payTo?: `0x${string}` | undefined;
    }
  | { kind: 'misconfigured'; error: X402ConfigError }
  | { kind: 'unverified'; endpointId: string | undefined; cause: string };

export interface SellerIdentityOptions {
  apiUrl: string;
  /** The CAIP-2 network payments are taken on: the platform answers where this seller's buyers pay there. */
  network?: string | undefined;
  token: string;
  endpointId: string | undefined;
  fetch: FetchLike | undefined;
  timeoutMs: number;
  successTtlMs: number;
  failureCooldownMs: number;
  logger: X402Logger;
  clock?: () => number;
}

export class SellerIdentity {
  private state: SellerState | undefined;
  private expiresAt = 0;
  private inFlight: Promise<SellerState> | undefined;
  private readonly clock: () => number;

  constructor(private readonly options: SellerIdentityOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** The current state; asks the platform when nothing usable is cached. */
  async current(): Promise<SellerState> {
    const now = this.clock();
    const state = this.state;
    if (state && now < this.expiresAt) return state;
    if (state && state.kind !== 'misconfigured') {
      void this.refresh(); // stale but usable: refresh in the background
      return state;
    }
    return this.refresh();
  }

  private refresh(): Promise<SellerState> {
    this.inFlight ??= this.ask().then(
      (state) => {
        this.state = state;
        this.expiresAt =
          this.clock() + (state.kind === 'verified' ? this.options.successTtlMs : this.options.failureCooldownMs);
        this.inFlight = undefined;
        if (state.kind === 'misconfigured')
          this.options.logger.error({ problems: state.error.problems }, state.error.message);
        else if (state.kind === 'unverified')
          this.options.logger.warn(
            { cause: state.cause },
            'x402 middleware: could not validate the service PAT; payments proceed, retrying shortly',
          );
        return state;
      },
      (err: unknown) => {
        this.inFlight = undefined;
        throw err;
      },
    );
    return this.inFlight;
  }

  private async ask(): Promise<SellerState> {
    const { apiUrl, token, endpointId } = this.options;
    const result = await boundedFetchJson({
      fetch: this.options.fetch,
      method: 'POST',
      url: `${apiUrl}/v1/auth/verify`,
      body: this.options.network === undefined ? {} : { network: this.options.network },
      headers: { authorization: `Bearer ${token}` },
      timeoutMs: this.options.timeoutMs,
      maxBytes: 4 * 1024 * 1024,
    });
    if (result.kind === 'failed') return { kind: 'unverified', endpointId, cause: result.cause };
    if (result.status === 401 || result.status === 403) {
      const code =
        result.json && typeof result.json === 'object'
          ? String((result.json as { error_code?: unknown }).error_code ?? '')
          : '';
      return {
        kind: 'misconfigured',
        error: new X402ConfigError([
          `the platform refused the service PAT (HTTP ${result.status}${code ? ` ${code}` : ''})`,
        ]),
      };
    }
    if (result.status < 200 || result.status >= 300)
      return { kind: 'unverified', endpointId, cause: `HTTP ${result.status}` };
    const parsed = verifyReplySchema.safeParse(result.json);
    if (!parsed.success) return { kind: 'unverified', endpointId, cause: 'malformed /v1/auth/verify reply' };
    const collect = collectionOf(parsed.data, this.options.network);
    if (collect.kind === 'misconfigured') return collect;
    const payTo = collect.payTo;
    const endpoints = parsed.data.endpoints.map((e) => ({ id: e.endpoint_id ?? e.id ?? '', slug: e.slug ?? '' }));
    const pairs = () => endpoints.map((e) => `(${e.slug}, ${e.id})`).join(', ');
    if (endpointId !== undefined) {
      if (!endpoints.some((e) => e.id === endpointId)) {
        return {
          kind: 'misconfigured',
          error: new X402ConfigError([
            `endpoint_id ${endpointId} is not one of this seller's endpoints: ${pairs() || 'none registered'}`,
          ]),
        };
      }
      return { kind: 'verified', sellerId: parsed.data.seller_id, endpointId, payTo };
    }
    if (endpoints.length >= 2) {
      return {
        kind: 'misconfigured',
        error: new X402ConfigError([
          `the seller has ${endpoints.length} endpoints; set endpoint_id to one of: ${pairs()}`,
        ]),
      };
    }
    return { kind: 'verified', sellerId: parsed.data.seller_id, endpointId: endpoints[0]?.id || undefined, payTo };
  }
}

/**
 * Where a platform_mor seller's buyers pay: the collection address the platform named. A platform that answers
 * `collect_to: null` for such a seller does not collect on this network, so the paywall has no terms to offer
 * (taking the payment to the seller's own address would never be owed to it). An older platform names none:
 * the configured pay_to stands.
 */
function collectionOf(
  reply: z.infer<typeof verifyReplySchema>,
  network: string | undefined,
): { kind: 'ok'; payTo: `0x${string}` | undefined } | { kind: 'misconfigured'; error: X402ConfigError } {
  if (reply.payout_mode !== 'platform_mor' || reply.collect_to === undefined) return { kind: 'ok', payTo: undefined };
  if (reply.collect_to === null)
    return {
      kind: 'misconfigured',
      error: new X402ConfigError([
        `the platform is this seller's merchant of record but does not collect on network ${network ?? '(none named)'}`,
      ]),
    };
  return { kind: 'ok', payTo: reply.collect_to as `0x${string}` };
}

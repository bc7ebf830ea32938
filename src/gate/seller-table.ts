/**
 * The gate's sellers as it sells them, built from one catalogue (src/shared/api-responses/gate-responses.ts):
 * per seller its slug, origin and state, and per endpoint the paywall terms (`PaidSite`: price, route prices,
 * pay-to, network, facilitator address — validated by the paywall's own option checks, as the middleware's are)
 * and how a request is matched to it (method and exact path first, then the dearest of the path patterns that
 * fit, matching-endpoint.ts; each pattern parsed and folded here, once per catalogue: endpoint-pattern.ts).
 *
 * A seller that cannot be sold — suspended, no origin, an origin it has not verified, no proven pay-to, or terms
 * the paywall refuses — is kept with `problem` set: paid routes answer as the middleware does for a refused PAT
 * (500 `seller_misconfigured`), its free routes still pass when its origin is verified (never otherwise: no
 * verified origin, no `origin`, nothing forwarded), and the problem goes to the log once per catalogue.
 *
 * With a Solana facilitator (GATE_SOLANA_FACILITATOR_URL), a seller with a proven Solana pay-to
 * (`solana_pay_to`) is also sold on Solana (GATE_SOLANA_NETWORK), or only there when it proved no EVM address.
 *
 * Defends against: a catalogue entry the paywall could not collect on being sold anyway; an origin the seller
 * has not proven it controls receiving anything; a path pattern compiled to a regular expression (matching is
 * by segments, src/shared/path-pattern.ts). Does not defend against: prices or pay-to addresses the seller did
 * not mean — they are the seller's own settings on the platform.
 */
import type { GateCatalogue, GateEndpoint, GateSeller } from '../shared/api-responses/gate-responses.js';
import type { PaidSite } from '../x402/seller/paid-request.js';
import type { SellerState } from '../x402/seller/seller-identity.js';
import { resolveX402Options, type ResolvedX402Config } from '../x402/seller/seller-options.js';
import { X402ConfigError } from '../x402/seller/x402-config-error.js';
import type { FacilitatorClient } from '../x402/facilitator-client.js';
import type { X402Logger } from '../x402/seller/x402-koa-options.js';
import { SolanaTerms } from '../x402/seller/solana-terms.js';

/** How the table sells on Solana, when the gate has a Solana facilitator. */
export interface GateSolana {
  facilitator: FacilitatorClient;
  logger: X402Logger;
}
import type { GateConfig } from './gate-config.js';
import { gateDiscoveryOptions } from './endpoint-discovery.js';
import { endpointPattern, type EndpointPattern } from './endpoint-pattern.js';

export interface GateEndpointEntry {
  endpoint: GateEndpoint;
  site: PaidSite;
  /** `endpoint.path_pattern` parsed and folded once (endpoint-pattern.ts); undefined without a usable one. */
  pattern: EndpointPattern | undefined;
}

export interface GateSellerEntry {
  sellerId: string;
  slug: string;
  /** Where requests go (scheme, host, port): a usable origin the seller verified, else undefined. */
  origin: URL | undefined;
  /** Why the seller cannot be sold (then `origin` may be undefined), or undefined. */
  problem: string | undefined;
  endpoints: GateEndpointEntry[];
}

export interface SellerTable {
  bySlug: ReadonlyMap<string, GateSellerEntry>;
  sellers: number;
  endpoints: number;
}

function originOf(raw: string | null, verified: boolean): URL | undefined {
  if (raw === null || !verified) return undefined;
  try {
    const url = new URL(raw);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) return undefined;
    return new URL(url.origin);
  } catch {
    return undefined;
  }
}

/** The terms of one endpoint, or the paywall's reasons for refusing them. */
function termsOf(
  config: GateConfig,
  seller: GateSeller,
  endpoint: GateEndpoint,
  sellsSolana: boolean,
): { kind: 'ok'; config: ResolvedX402Config } | { kind: 'refused'; problems: readonly string[] } {
  const solanaPayTo = sellsSolana ? (seller.solana_pay_to ?? undefined) : undefined;
  try {
    return {
      kind: 'ok',
      config: resolveX402Options({
        token: config.token,
        price: endpoint.price,
        route_prices: endpoint.route_prices,
        // A seller without a proven pay-to has no terms; the zero address only lets its free routes pass. One
        // with a Solana pay-to only is sold on Solana only.
        pay_to: seller.pay_to ?? (solanaPayTo ? undefined : '0x0000000000000000000000000000000000000001'),
        ...(solanaPayTo
          ? {
              solana: {
                pay_to: solanaPayTo,
                network: config.solanaNetwork,
                facilitator_url: config.solanaFacilitatorUrl,
              },
            }
          : {}),
        endpoint_id: endpoint.endpoint_id,
        network: config.network,
        schemes: config.schemes,
        ...(config.facilitatorAddress ? { facilitator_address: config.facilitatorAddress } : {}),
        ...(config.facilitatorUrl ? { facilitator_url: config.facilitatorUrl } : {}),
        api_url: config.apiUrl,
        description: `${seller.slug} ${endpoint.method} ${endpoint.path}`.slice(0, 1024),
        max_body_bytes: config.maxHeldBytes,
        payment_identifier: {
          required: config.paymentId.required,
          max_answer_bytes: config.paymentId.maxAnswerBytes,
        },
        timeouts: {
          verify_ms: config.verifyTimeoutMs,
          settle_ms: config.settleTimeoutMs,
          platform_ms: config.platformTimeoutMs,
        },
        env: config.paywallEnv,
        discovery: gateDiscoveryOptions(seller, endpoint),
      }),
    };
  } catch (err) {
    if (err instanceof X402ConfigError) return { kind: 'refused', problems: err.problems };
    throw err;
  }
}

function sellerProblem(seller: GateSeller, origin: URL | undefined, sellsSolana: boolean): string | undefined {
  if (seller.status !== 'active') return `seller ${seller.slug} is ${seller.status}`;
  if (seller.origin !== null && !seller.origin_verified) return `seller ${seller.slug} has not verified its origin`;
  if (!origin) return `seller ${seller.slug} has no usable origin`;
  if (!seller.pay_to && !(sellsSolana && seller.solana_pay_to))
    return `seller ${seller.slug} has no proven pay-to address`;
  return undefined;
}

/** Builds the table; `onProblem` hears every seller or endpoint that cannot be sold. */
export function buildSellerTable(
  config: GateConfig,
  catalogue: GateCatalogue,
  onProblem: (fields: { seller_id: string; endpoint_id?: string; problems: readonly string[] }) => void,
  solana?: GateSolana,
): SellerTable {
  const sellsSolana = solana !== undefined && config.solanaFacilitatorUrl !== undefined;
  const bySlug = new Map<string, GateSellerEntry>();
  let endpoints = 0;
  for (const seller of catalogue.sellers) {
    const origin = originOf(seller.origin, seller.origin_verified);
    const problem = sellerProblem(seller, origin, sellsSolana);
    if (problem) onProblem({ seller_id: seller.seller_id, problems: [problem] });
    const misconfigured: SellerState = {
      kind: 'misconfigured',
      error: new X402ConfigError([problem ?? 'unsellable']),
    };
    const entry: GateSellerEntry = { sellerId: seller.seller_id, slug: seller.slug, origin, problem, endpoints: [] };
    for (const endpoint of seller.endpoints) {
      const terms = termsOf(config, seller, endpoint, sellsSolana);
      if (terms.kind === 'refused') {
        onProblem({ seller_id: seller.seller_id, endpoint_id: endpoint.endpoint_id, problems: terms.problems });
        continue;
      }
      const state: SellerState = problem
        ? misconfigured
        : { kind: 'verified', sellerId: seller.seller_id, endpointId: endpoint.endpoint_id };
      const offer = terms.config.solana;
      const solanaTerms = offer && solana ? new SolanaTerms(offer, solana.facilitator, solana.logger) : undefined;
      entry.endpoints.push({
        endpoint,
        site: {
          config: terms.config,
          seller: () => state,
          solana: solanaTerms,
          // The platform finds the seller of a gate's id by its endpoint (docs/gate.md#payment-identifier).
          paymentIdScope: endpoint.endpoint_id,
        },
        pattern: endpointPattern(endpoint.path_pattern),
      });
      endpoints++;
    }
    bySlug.set(seller.slug.toLowerCase(), entry);
  }
  return { bySlug, sellers: bySlug.size, endpoints };
}

/**
 * Sellers (services): registration, the seller's profile (name, origin, OpenAPI URL, capabilities, payout
 * mode), banking declaration, suspend/resume, and who may manage a seller. A seller belongs to an account; its
 * management surface is reached with that account's sign-in session or with a service PAT scoped to it. Suspend is a
 * soft delete: endpoints and ledger survive and resume restores. The account's sellers are listed page by page
 * (keyset on created_at, id).
 *
 * The rest of a seller lives beside this file, one idea each: its endpoints (./seller-endpoint-service.ts), the
 * OpenAPI refresh (./origin/seller-openapi-refresh.ts), origin verification
 * (./origin/seller-origin-verification.ts), its money (./ledger/seller-ledger-service.ts); `createSellerServices`
 * wires the first three with this one, over the wing's stores (./store/seller-stores.ts).
 *
 * Defends: one account managing another's seller, a service PAT reaching another seller, a session exchanged
 * from an agent PAT reaching the owner's sellers (`authorize`); a suspended seller's middleware building a
 * route table (`authorizeMiddleware`). Does not defend: what the seller declares about itself (banking is
 * `declared` until the operator marks it verified).
 */
import type {
  BankingView,
  CreatedSeller,
  IngestOutcome,
  SellerPage,
  SellerView,
} from '../../shared/api-responses/seller-responses.js';
import type { Principal } from '../auth/principal.js';
import { generateId } from '../auth/token-codec.js';
import type { PageRequest } from '../db/keyset-cursor.js';
import { AppError } from '../errors/app-error.js';
import type { HostResolver } from '../net/vetted-fetch.js';
import type { OriginFetchOptions } from './origin/origin-verifier.js';
import type { PatService } from '../platform/pat-service.js';
import { DEFAULT_MAX_ENDPOINTS } from './seller-endpoint-bound.js';
import { SellerEndpointService } from './seller-endpoint-service.js';
import { SellerOpenApiRefresh } from './origin/seller-openapi-refresh.js';
import { SellerOriginVerification } from './origin/seller-origin-verification.js';
import { bankingView, sellerView, slugify, type SellerRow } from './seller-views.js';
import type { EndpointStore, NewSeller, SellerChanges, SellerStore } from './store/seller-stores.js';

/** What the seller services take of the PATs: a seller's service PAT is minted at registration. */
export type ServicePatIssuer = Pick<PatService, 'create'>;

/**
 * Sellers one account may register when not configured (TREASURY_MAX_SELLERS_PER_ACCOUNT). A seller is never
 * deleted, and a `platform_mor` one holds a collection wallet (an HSM or KMS key) per network collected on: the
 * bound is what keeps one tenant's keys, service PATs and turns of the ledger verifier finite.
 */
export const DEFAULT_MAX_SELLERS_PER_ACCOUNT = 100;

/** What a seller's profile service is given (wired in createSellerServices). */
export interface SellerServiceDeps {
  store: SellerStore;
  pats: ServicePatIssuer;
  clock: () => Date;
  /** Ingests the OpenAPI document of a seller registered with one. */
  openapi: Pick<SellerOpenApiRefresh, 'refresh'>;
  /** The most sellers one account may register (TREASURY_MAX_SELLERS_PER_ACCOUNT); 100 by default. */
  maxPerAccount?: number | undefined;
}

export class SellerService {
  private readonly store: SellerStore;
  private readonly pats: ServicePatIssuer;
  private readonly clock: () => Date;
  private readonly openapi: SellerServiceDeps['openapi'];
  private readonly maxPerAccount: number;

  constructor(deps: SellerServiceDeps) {
    ({ store: this.store, pats: this.pats, clock: this.clock, openapi: this.openapi } = deps);
    this.maxPerAccount = deps.maxPerAccount ?? DEFAULT_MAX_SELLERS_PER_ACCOUNT;
  }

  async create(
    accountId: string,
    input: {
      name: string;
      slug?: string | undefined;
      openapi_url?: string | undefined;
      capabilities?: string[] | undefined;
      protocol?: 'x402' | 'mpp' | undefined;
      payout_mode?: 'direct' | 'platform_mor' | undefined;
      legal_entity?: string | undefined;
      country?: string | undefined;
      origin?: string | undefined;
    },
    actor: string,
  ): Promise<CreatedSeller> {
    const now = this.clock();
    const id = generateId('sel_');
    const row = (slug: string): NewSeller => ({
      id,
      account_id: accountId,
      name: input.name,
      slug,
      openapi_url: input.openapi_url ?? null,
      origin: input.origin ? new URL(input.origin).origin : null,
      capabilities: input.capabilities ?? [],
      protocol: input.protocol ?? 'x402',
      payout_mode: input.payout_mode ?? 'direct',
      legal_entity: input.legal_entity ?? null,
      country: input.country ?? null,
      banking_state: input.legal_entity && input.country ? 'declared' : 'none',
      status: 'active',
      created_at: now,
      updated_at: now,
    });
    // A slug made from the name gets the id's tail when taken — also when another seller took it meanwhile.
    const named = slugify(input.name);
    const withTail = `${named}-${id.slice(-6)}`;
    let slug = input.slug ?? ((await this.store.slugTaken(named)) ? withTail : named);
    let added = await this.store.add(row(slug), this.maxPerAccount);
    if (added === 'slug_taken' && slug === named && !input.slug) {
      slug = withTail;
      added = await this.store.add(row(slug), this.maxPerAccount);
    }
    if (added === 'limit_reached')
      throw new AppError('seller_limit_reached', { fields: { max_sellers: this.maxPerAccount } });
    if (added === 'slug_taken') throw new AppError('slug_taken', { fields: { slug } });
    const pat = await this.pats.create(
      accountId,
      { scope_type: 'service', scope_id: id, label: `${slug} service` },
      actor,
    );
    const seller = (await this.store.byId(id))!;
    // An openapi_url triggers an ingest; the seller exists either way and `refresh` can retry.
    let ingest: IngestOutcome | undefined;
    if (seller.openapi_url) {
      ingest = await this.openapi
        .refresh(seller)
        .catch((err: unknown) => ({ error_code: err instanceof AppError ? err.code : 'internal_error' }));
    }
    return { ...sellerView(seller), pat: pat.pat, pat_id: pat.id, ...(ingest ? { ingest } : {}) };
  }

  /**
   * The seller a principal may manage: the owner's sign-in session, or a service PAT scoped to it. A session
   * exchanged from an agent PAT is refused as that PAT is (a credential never outranks what made it).
   */
  async authorize(principal: Principal, sellerId: string): Promise<SellerRow> {
    const ownerSession =
      principal.kind === 'token' && principal.tokenKind === 'session' && principal.sessionOrigin === 'sign_in';
    const servicePat = principal.kind === 'token' && principal.tokenKind === 'pat' && principal.scopeType === 'service';
    const seller = (ownerSession || servicePat) && (await this.store.byId(sellerId));
    const owns =
      seller &&
      principal.kind === 'token' &&
      ((ownerSession && principal.accountId === seller.account_id) || (servicePat && principal.scopeId === seller.id));
    if (!seller || !owns) {
      if (ownerSession || servicePat) throw new AppError('seller_not_found');
      throw new AppError('insufficient_scope', {
        message: "Seller routes need the owner's sign-in session or a service PAT of that seller.",
      });
    }
    return seller;
  }

  /** The seller behind a middleware's service PAT (`POST /v1/auth/verify`): refused for other bearers and while suspended. */
  async authorizeMiddleware(principal: Principal): Promise<SellerRow> {
    if (principal.kind !== 'token' || principal.tokenKind !== 'pat' || principal.scopeType !== 'service') {
      throw new AppError('insufficient_scope', { message: '/v1/auth/verify takes a service PAT.' });
    }
    const seller = await this.authorize(principal, principal.scopeId);
    if (seller.status === 'suspended') throw new AppError('seller_suspended');
    return seller;
  }

  /** A page of the account's sellers, oldest first. */
  async list(accountId: string, request: PageRequest): Promise<SellerPage> {
    const { page, nextCursor } = await this.store.pageOf(accountId, request);
    return { sellers: page.map(sellerView), next_cursor: nextCursor };
  }

  async update(
    seller: SellerRow,
    patch: {
      name?: string | undefined;
      origin?: string | undefined;
      openapi_url?: string | undefined;
      capabilities?: string[] | undefined;
      payout_mode?: 'direct' | 'platform_mor' | undefined;
    },
  ): Promise<SellerView> {
    const changes: SellerChanges = { updated_at: this.clock() };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.openapi_url !== undefined) changes.openapi_url = patch.openapi_url;
    if (patch.capabilities !== undefined) changes.capabilities = patch.capabilities;
    if (patch.payout_mode !== undefined) changes.payout_mode = patch.payout_mode;
    if (patch.origin !== undefined && patch.origin !== seller.origin) {
      changes.origin = new URL(patch.origin).origin;
      changes.verified_at = null; // a new origin must be verified again
    }
    return sellerView((await this.store.change(seller.id, changes))!);
  }

  async setStatus(seller: SellerRow, status: 'active' | 'suspended'): Promise<SellerView> {
    return sellerView((await this.store.change(seller.id, { status, updated_at: this.clock() }))!);
  }

  banking(seller: SellerRow): BankingView {
    return bankingView(seller);
  }

  async setBanking(seller: SellerRow, input: { legal_entity: string; country: string }): Promise<BankingView> {
    const row = await this.store.change(seller.id, {
      legal_entity: input.legal_entity,
      country: input.country,
      banking_state: 'declared',
      updated_at: this.clock(),
    });
    return bankingView(row!);
  }

  /** The operator marks a declared legal entity as verified (after its own KYB checks, outside Treasury). */
  async verifyBanking(sellerId: string): Promise<BankingView> {
    const seller = await this.store.byId(sellerId);
    if (!seller) throw new AppError('seller_not_found');
    if (seller.banking_state === 'none') throw new AppError('banking_not_declared');
    const row = await this.store.change(sellerId, { banking_state: 'verified', updated_at: this.clock() });
    return bankingView(row!);
  }
}

/** The seller services the seller routes use, wired together. */
export interface SellerServices {
  profiles: SellerService;
  endpoints: SellerEndpointService;
  openapi: SellerOpenApiRefresh;
  origins: SellerOriginVerification;
}

/**
 * Outbound rules for origin verification and OpenAPI ingest (src/api/net/vetted-fetch.ts; `resolveHost` is a test
 * seam), and the endpoint bound.
 */
export interface SellerOutboundOptions {
  allowPrivateOrigins: boolean;
  outboundAllowedPorts?: readonly number[] | undefined;
  resolveHost?: HostResolver | undefined;
  /** The most endpoints one seller may hold (./seller-endpoint-bound.ts); 1,000 by default. */
  maxEndpoints?: number | undefined;
  /** The most sellers one account may register; 100 by default. */
  maxSellersPerAccount?: number | undefined;
}

/** What the seller services are built from (wired once in src/api/app.ts). */
export interface SellerServicesDeps {
  sellers: SellerStore;
  endpoints: EndpointStore;
  pats: ServicePatIssuer;
  clock: () => Date;
  options?: SellerOutboundOptions | undefined;
}

export function createSellerServices(deps: SellerServicesDeps): SellerServices {
  const { clock, options = { allowPrivateOrigins: false } } = deps;
  const outbound: OriginFetchOptions = {
    allowPrivate: options.allowPrivateOrigins,
    allowedPorts: options.outboundAllowedPorts,
    resolveHost: options.resolveHost,
  };
  const maxEndpoints = options.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS;
  const openapi = new SellerOpenApiRefresh({ store: deps.endpoints, clock, outbound, maxEndpoints });
  return {
    profiles: new SellerService({
      store: deps.sellers,
      pats: deps.pats,
      clock,
      openapi,
      maxPerAccount: options.maxSellersPerAccount,
    }),
    endpoints: new SellerEndpointService(deps.endpoints, clock, maxEndpoints),
    openapi,
    origins: new SellerOriginVerification(deps.sellers, clock, outbound),
  };
}

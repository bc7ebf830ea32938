/**
 * Sellers (services) and their priced endpoints. A seller belongs to an account; its management surface
 * is reached with that account's session or with a service PAT scoped to it. Suspend is a soft delete:
 * endpoints and ledger survive and resume restores. The ledger, pay-to addresses and payouts are
 * ./seller-ledger-service.ts. The account's sellers and a seller's endpoints are listed page by page (keyset on
 * created_at, id); `/v1/auth/verify` still answers every endpoint at once, for the middleware's route table.
 */
import type { Knex } from 'knex';
import { formatUsd, parseUsd } from '../../../policy/money.js';
import type { Principal } from '../auth/authenticator.js';
import { generateId } from '../auth/token-codec.js';
import { AppError } from '../errors/app-error.js';
import { readKeysetPage, type PageRequest } from '../db/keyset-cursor.js';
import type { HostResolver } from '../net/vetted-fetch.js';
import { fetchVerificationFile, guardedFetchText } from './origin-verifier.js';
import { parseOpenApi } from './openapi-ingest.js';
import type { PatService } from './pat-service.js';
import { randomBytes } from 'node:crypto';

/** The id shapes of the rows the lists' page cursors name. */
const LEDGER_ENTRY_ID = /^led_[0-9a-f]{24}$/;
const SELLER_ID = /^sel_[0-9a-f]{24}$/;
const ENDPOINT_ID = /^ep_[0-9a-f]{24}$/;
const PAYOUT_FLUSH_ID = /^po_[0-9a-f]{24}$/;
/** Ledger rows read per query by the CSV export. */
const EXPORT_PAGE_ROWS = 1_000;

export interface SellerRow {
  id: string;
  account_id: string;
  name: string;
  slug: string;
  openapi_url: string | null;
  capabilities: string[];
  protocol: string;
  payout_mode: string;
  legal_entity: string | null;
  country: string | null;
  banking_state: string;
  status: 'active' | 'suspended';
  origin: string | null;
  verification_token: string | null;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface EndpointRow {
  id: string;
  seller_id: string;
  slug: string;
  method: string;
  path: string;
  path_pattern: string | null;
  price_micro: string;
  route_prices: Record<string, string>;
  capabilities: string[];
  created_at: Date;
  updated_at: Date;
}

export const sellerView = (s: SellerRow) => ({
  seller_id: s.id,
  name: s.name,
  slug: s.slug,
  openapi_url: s.openapi_url,
  capabilities: s.capabilities,
  protocol: s.protocol,
  payout_mode: s.payout_mode,
  legal_entity: s.legal_entity,
  country: s.country,
  banking_state: s.banking_state,
  status: s.status,
  origin: s.origin,
  origin_verified: s.verified_at !== null,
  verified_at: s.verified_at?.toISOString() ?? null,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

export const endpointView = (e: EndpointRow) => ({
  endpoint_id: e.id,
  seller_id: e.seller_id,
  slug: e.slug,
  method: e.method,
  path: e.path,
  path_pattern: e.path_pattern,
  price: formatUsd(BigInt(e.price_micro)),
  route_prices: e.route_prices,
  capabilities: e.capabilities,
  created_at: e.created_at.toISOString(),
  updated_at: e.updated_at.toISOString(),
});

const bankingView = (s: SellerRow) => ({ seller_id: s.id, legal_entity: s.legal_entity, country: s.country, state: s.banking_state });

function slugify(name: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48);
  return base || 'service';
}

export class SellerService {
  constructor(
    private readonly knex: Knex,
    private readonly pats: PatService,
    private readonly clock: () => Date,
    /** Outbound rules for origin verification and OpenAPI ingest (src/api/net/vetted-fetch.ts); `resolveHost` is a test seam. */
    private readonly options: { allowPrivateOrigins: boolean; outboundAllowedPorts?: readonly number[] | undefined; resolveHost?: HostResolver | undefined } = { allowPrivateOrigins: false },
  ) {}

  private outbound() {
    return { allowPrivate: this.options.allowPrivateOrigins, allowedPorts: this.options.outboundAllowedPorts, resolveHost: this.options.resolveHost };
  }

  async update(seller: SellerRow, patch: { name?: string | undefined; origin?: string | undefined; openapi_url?: string | undefined; capabilities?: string[] | undefined; payout_mode?: 'direct' | 'platform_mor' | undefined }) {
    const changes: Record<string, unknown> = { updated_at: this.clock() };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.openapi_url !== undefined) changes.openapi_url = patch.openapi_url;
    if (patch.capabilities !== undefined) changes.capabilities = JSON.stringify(patch.capabilities);
    if (patch.payout_mode !== undefined) changes.payout_mode = patch.payout_mode;
    if (patch.origin !== undefined && patch.origin !== seller.origin) {
      changes.origin = new URL(patch.origin).origin;
      changes.verified_at = null; // a new origin must be verified again
    }
    const [row] = (await this.knex('sellers').where({ id: seller.id }).update(changes).returning('*')) as SellerRow[];
    return sellerView(row!);
  }

  async setBanking(seller: SellerRow, input: { legal_entity: string; country: string }) {
    const [row] = (await this.knex('sellers')
      .where({ id: seller.id })
      .update({ legal_entity: input.legal_entity, country: input.country, banking_state: 'declared', updated_at: this.clock() })
      .returning('*')) as SellerRow[];
    return bankingView(row!);
  }

  /** The operator marks a declared legal entity as verified (after its own KYB checks, outside Treasury). */
  async verifyBanking(sellerId: string) {
    const seller = (await this.knex('sellers').where({ id: sellerId }).first()) as SellerRow | undefined;
    if (!seller) throw new AppError('seller_not_found');
    if (seller.banking_state === 'none') throw new AppError('banking_not_declared');
    const [row] = (await this.knex('sellers').where({ id: sellerId }).update({ banking_state: 'verified', updated_at: this.clock() }).returning('*')) as SellerRow[];
    return bankingView(row!);
  }

  banking(seller: SellerRow) {
    return bankingView(seller);
  }

  /** The token the seller must serve at /.well-known/xx-verification.txt (issued once, kept). */
  async verificationToken(seller: SellerRow): Promise<string> {
    if (seller.verification_token) return seller.verification_token;
    const token = `xx-verify-${randomBytes(16).toString('hex')}`;
    await this.knex('sellers').where({ id: seller.id }).whereNull('verification_token').update({ verification_token: token });
    const row = await this.knex('sellers').where({ id: seller.id }).first('verification_token');
    return row.verification_token as string;
  }

  async verifyOrigin(seller: SellerRow) {
    if (!seller.origin) throw new AppError('origin_not_configured');
    const token = await this.verificationToken(seller);
    const body = await fetchVerificationFile(seller.origin, this.outbound());
    if (!body.split(/\s+/).includes(token)) throw new AppError('verification_token_mismatch', { fields: { expected_file: `${seller.origin}/.well-known/xx-verification.txt` } });
    const [row] = (await this.knex('sellers').where({ id: seller.id }).update({ verified_at: this.clock() }).returning('*')) as SellerRow[];
    return { ...sellerView(row!), verified: true };
  }

  /**
   * Fetches openapi_url and reconciles the seller's ingested endpoints with it: new operations are added,
   * changed ones updated, vanished ones removed (kept, and reported as such, when they have ledger rows).
   * Manual endpoints are never touched. Idempotent: a second refresh of the same document changes nothing.
   */
  async refresh(seller: SellerRow) {
    if (!seller.openapi_url) throw new AppError('openapi_url_not_configured');
    const text = await guardedFetchText(new URL(seller.openapi_url), { ...this.outbound(), maxBytes: 1024 * 1024, notFound: 'openapi_not_found' });
    const wanted = parseOpenApi(text);
    const now = this.clock();
    const report = { added: [] as string[], changed: [] as string[], removed: [] as string[], kept_for_ledger: [] as string[], unchanged: 0 };
    await this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 19))', [`seller:${seller.id}`]);
      const existing = (await trx('endpoints').where({ seller_id: seller.id })) as Array<EndpointRow & { source: string }>;
      const key = (method: string, path: string) => `${method} ${path}`;
      const byKey = new Map(existing.map((e) => [key(e.method, e.path), e]));
      const slugs = new Set(existing.map((e) => e.slug));
      const seen = new Set<string>();
      for (const w of wanted) {
        const k = key(w.method, w.path);
        if (seen.has(k)) continue;
        seen.add(k);
        const current = byKey.get(k);
        if (!current) {
          let slug = w.slug;
          for (let i = 2; slugs.has(slug); i++) slug = `${w.slug.slice(0, 58)}-${i}`;
          slugs.add(slug);
          await trx('endpoints').insert({
            id: generateId('ep_'),
            seller_id: seller.id,
            slug,
            method: w.method,
            path: w.path,
            path_pattern: w.path_pattern,
            price_micro: parseUsd(w.price).toString(),
            route_prices: '{}',
            capabilities: JSON.stringify(w.capabilities),
            source: 'openapi',
            created_at: now,
            updated_at: now,
          });
          report.added.push(slug);
          continue;
        }
        if (current.source !== 'openapi') {
          report.unchanged++;
          continue;
        }
        const price = parseUsd(w.price).toString();
        const differs = current.price_micro !== price || JSON.stringify(current.capabilities) !== JSON.stringify(w.capabilities) || (current.path_pattern ?? null) !== w.path_pattern;
        if (differs) {
          await trx('endpoints').where({ id: current.id }).update({ price_micro: price, capabilities: JSON.stringify(w.capabilities), path_pattern: w.path_pattern, updated_at: now });
          report.changed.push(current.slug);
        } else report.unchanged++;
      }
      for (const e of existing) {
        if (e.source !== 'openapi' || seen.has(key(e.method, e.path))) continue;
        const used = await endpointHasLedger(trx, seller.id, e.id);
        if (used) report.kept_for_ledger.push(e.slug);
        else {
          await trx('endpoints').where({ id: e.id }).delete();
          report.removed.push(e.slug);
        }
      }
    });
    return { seller_id: seller.id, openapi_url: seller.openapi_url, ...report };
  }

  async create(
    accountId: string,
    input: { name: string; slug?: string | undefined; openapi_url?: string | undefined; capabilities?: string[] | undefined; protocol?: 'x402' | 'mpp' | undefined; payout_mode?: 'direct' | 'platform_mor' | undefined; legal_entity?: string | undefined; country?: string | undefined; origin?: string | undefined },
    actor: string,
  ) {
    const now = this.clock();
    const id = generateId('sel_');
    let slug = input.slug ?? slugify(input.name);
    if (!input.slug && (await this.knex('sellers').where({ slug }).first('id'))) slug = `${slug}-${id.slice(-6)}`;
    try {
      await this.knex('sellers').insert({
        id,
        account_id: accountId,
        name: input.name,
        slug,
        openapi_url: input.openapi_url ?? null,
        origin: input.origin ? new URL(input.origin).origin : null,
        capabilities: JSON.stringify(input.capabilities ?? []),
        protocol: input.protocol ?? 'x402',
        payout_mode: input.payout_mode ?? 'direct',
        legal_entity: input.legal_entity ?? null,
        country: input.country ?? null,
        banking_state: input.legal_entity && input.country ? 'declared' : 'none',
        status: 'active',
        created_at: now,
        updated_at: now,
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('slug_taken', { fields: { slug } });
      throw err;
    }
    const pat = await this.pats.create(accountId, { scope_type: 'service', scope_id: id, label: `${slug} service` }, actor);
    const seller = (await this.knex('sellers').where({ id }).first()) as SellerRow;
    // An openapi_url triggers an ingest; the seller exists either way and `refresh` can retry.
    let ingest: Record<string, unknown> | undefined;
    if (seller.openapi_url) {
      ingest = await this.refresh(seller).catch((err: unknown) => ({ error_code: err instanceof AppError ? err.code : 'internal_error' }));
    }
    return { ...sellerView(seller), pat: pat.pat, pat_id: pat.id, ...(ingest ? { ingest } : {}) };
  }

  /** The seller a principal may manage: the owner's session, or a service PAT scoped to it. */
  async authorize(principal: Principal, sellerId: string): Promise<SellerRow> {
    const seller = (await this.knex('sellers').where({ id: sellerId }).first()) as SellerRow | undefined;
    const owns =
      seller &&
      principal.kind === 'token' &&
      ((principal.tokenKind === 'session' && principal.accountId === seller.account_id) || (principal.tokenKind === 'pat' && principal.scopeType === 'service' && principal.scopeId === seller.id));
    if (!seller || !owns) {
      if (principal.kind === 'token' && (principal.tokenKind === 'session' || principal.scopeType === 'service')) throw new AppError('seller_not_found');
      throw new AppError('insufficient_scope', { message: 'Seller routes need the owner account session or a service PAT of that seller.' });
    }
    return seller;
  }

  /** A page of the account's sellers, oldest first. */
  async list(accountId: string, request: PageRequest) {
    const { page, nextCursor } = await readKeysetPage<SellerRow>(this.knex('sellers').where({ account_id: accountId }), request, SELLER_ID);
    return { sellers: page.map(sellerView), next_cursor: nextCursor };
  }

  async setStatus(seller: SellerRow, status: 'active' | 'suspended') {
    const [row] = (await this.knex('sellers').where({ id: seller.id }).update({ status, updated_at: this.clock() }).returning('*')) as SellerRow[];
    return sellerView(row!);
  }

  async createEndpoint(seller: SellerRow, input: { slug?: string | undefined; path: string; method?: string | undefined; price: string; route_prices?: Record<string, string> | undefined; path_pattern?: string | undefined; capabilities?: string[] | undefined }) {
    const now = this.clock();
    const id = generateId('ep_');
    try {
      const [row] = (await this.knex('endpoints')
        .insert({
          id,
          seller_id: seller.id,
          slug: input.slug ?? slugify(`${input.method ?? 'GET'} ${input.path}`),
          method: input.method ?? 'GET',
          path: input.path,
          path_pattern: input.path_pattern ?? null,
          price_micro: parseUsd(input.price).toString(),
          route_prices: JSON.stringify(input.route_prices ?? {}),
          capabilities: JSON.stringify(input.capabilities ?? []),
          created_at: now,
          updated_at: now,
        })
        .returning('*')) as EndpointRow[];
      return endpointView(row!);
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new AppError('endpoint_exists');
      throw err;
    }
  }

  /** A page of the seller's endpoints, oldest first. */
  async listEndpoints(seller: SellerRow, request: PageRequest) {
    const { page, nextCursor } = await readKeysetPage<EndpointRow>(this.knex('endpoints').where({ seller_id: seller.id }), request, ENDPOINT_ID);
    return { endpoints: page.map(endpointView), next_cursor: nextCursor };
  }

  async updateEndpoint(seller: SellerRow, endpointId: string, patch: { price?: string | undefined; route_prices?: Record<string, string> | undefined; path_pattern?: string | null | undefined; capabilities?: string[] | undefined; method?: string | undefined; path?: string | undefined }) {
    const changes: Record<string, unknown> = { updated_at: this.clock() };
    if (patch.price !== undefined) changes.price_micro = parseUsd(patch.price).toString();
    if (patch.route_prices !== undefined) changes.route_prices = JSON.stringify(patch.route_prices);
    if (patch.path_pattern !== undefined) changes.path_pattern = patch.path_pattern;
    if (patch.capabilities !== undefined) changes.capabilities = JSON.stringify(patch.capabilities);
    if (patch.method !== undefined) changes.method = patch.method;
    if (patch.path !== undefined) changes.path = patch.path;
    const [row] = (await this.knex('endpoints').where({ id: endpointId, seller_id: seller.id }).update(changes).returning('*')) as EndpointRow[];
    if (!row) throw new AppError('endpoint_not_found');
    return endpointView(row);
  }

  async deleteEndpoint(seller: SellerRow, endpointId: string) {
    const hasLedger = () => new AppError('endpoint_has_ledger', { message: 'This endpoint has ledger rows; change its price instead of deleting it.' });
    if (await endpointHasLedger(this.knex, seller.id, endpointId)) throw hasLedger();
    const deleted = await this.knex('endpoints').where({ id: endpointId, seller_id: seller.id }).delete().catch((err: { code?: string }) => {
      // A ledger row reported between the check and the delete: its foreign key keeps the endpoint.
      if (err.code === '23503') throw hasLedger();
      throw err;
    });
    if (deleted === 0) throw new AppError('endpoint_not_found');
  }

  /** What the seller middleware needs on its first paid request. */
  async verify(principal: Principal) {
    if (principal.kind !== 'token' || principal.tokenKind !== 'pat' || principal.scopeType !== 'service') {
      throw new AppError('insufficient_scope', { message: '/v1/auth/verify takes a service PAT.' });
    }
    const seller = await this.authorize(principal, principal.scopeId);
    if (seller.status === 'suspended') throw new AppError('seller_suspended');
    // Every endpoint at once: the middleware builds its route table from this answer.
    const endpoints = (await this.knex('endpoints').where({ seller_id: seller.id }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as EndpointRow[];
    return { seller_id: seller.id, slug: seller.slug, protocol: seller.protocol, payout_mode: seller.payout_mode, status: seller.status, endpoints: endpoints.map(endpointView) };
  }

}

/**
 * Whether any ledger row names the endpoint: one lookup in the seller's per-day revenue (seller_revenue_days,
 * on its primary key's seller prefix, verified rows) and one among its unverified rows (their partial index),
 * rather than a scan of every ledger row, which has no endpoint index.
 */
async function endpointHasLedger(knex: Knex | Knex.Transaction, sellerId: string, endpointId: string): Promise<boolean> {
  if (await knex('seller_revenue_days').where({ seller_id: sellerId, endpoint_key: endpointId }).first('day')) return true;
  return !!(await knex('ledger_entries').where({ seller_id: sellerId, endpoint_id: endpointId }).whereNot({ status: 'verified' }).first('id'));
}

/**
 * Sellers (services), their priced endpoints, and the ledger the seller middleware reports to. A seller
 * belongs to an account; its management surface is reached with that account's session or with a
 * service PAT scoped to it. Suspend is a soft delete: endpoints and ledger survive and resume restores.
 * Ledger reports are idempotent per seller and tx_hash, attributed by pinned endpoint_id or by route lookup,
 * and stored `pending`: they count toward revenue and payables only once ./ledger-verifier.ts has verified them
 * on chain against the pay-to addresses the seller proved (registerPayTo).
 * The account's sellers, a seller's endpoints and its payout flushes are listed page by page (keyset on
 * created_at, id); `/v1/auth/verify` still answers every endpoint at once, for the middleware's route table.
 */
import type { Knex } from 'knex';
import { formatUsd, parseUsd } from '../../policy/money.js';
import type { Principal } from '../auth/authenticator.js';
import { generateId } from '../auth/token-codec.js';
import { AppError } from '../errors/app-error.js';
import { readKeysetPage, whereAfter, type PageRequest } from '../db/keyset-cursor.js';
import type { HostResolver } from '../net/vetted-fetch.js';
import { fetchVerificationFile, guardedFetchText } from './origin-verifier.js';
import { parseOpenApi } from './openapi-ingest.js';
import { matchPathPattern } from './path-pattern.js';
import { splitRevenueRange } from './split-revenue-range.js';
import type { PatService } from './pat-service.js';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { getAddress, verifyMessage, type Hex } from 'viem';
import type { LedgerVerifier } from './ledger-verifier.js';

/** What a seller's pay-to address signs (EIP-191) to prove payments to it belong to this seller. */
export function payToClaimMessage(sellerId: string, address: string): string {
  return `Treasury: payments to ${address.toLowerCase()} are revenue of seller ${sellerId}.`;
}

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

interface EndpointRow {
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
    /** Outbound rules for origin verification and OpenAPI ingest (src/net/vetted-fetch.ts); `resolveHost` is a test seam. */
    private readonly options: { allowPrivateOrigins: boolean; outboundAllowedPorts?: readonly number[] | undefined; resolveHost?: HostResolver | undefined } = { allowPrivateOrigins: false },
    /** Where reported rows are checked on chain (absent: rows wait as awaiting_verification). */
    private readonly ledgerVerifier?: Pick<LedgerVerifier, 'unreachableReason' | 'parkedUntil' | 'nudge'>,
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

  /**
   * Accrued payables (verified rows only) and a page of the flush history, newest first. In `direct` mode
   * buyers pay the seller's pay_to: nothing accrues. `pending_usd` is what platform_mor rows still waiting
   * for on-chain verification would add; `advance_usd` what was paid out before verification existed and no
   * verified row covers yet (migration 20261125200400).
   */
  async payouts(seller: SellerRow, request: PageRequest) {
    const { page, nextCursor } = await readKeysetPage<{ id: string; amount_micro: string; created_at: Date }>(this.knex('payout_flushes').where({ seller_id: seller.id }), request, PAYOUT_FLUSH_ID, 'desc');
    const payables = (await this.knex('seller_payables').where({ seller_id: seller.id }).first('earned_micro', 'paid_micro', 'advance_micro')) as { earned_micro: string; paid_micro: string; advance_micro: string } | undefined;
    const accrued = seller.payout_mode === 'direct' || !payables ? 0n : BigInt(payables.earned_micro) - BigInt(payables.paid_micro);
    const [pending] = (await this.knex('ledger_entries')
      .where({ seller_id: seller.id, status: 'pending', payout_mode: 'platform_mor' })
      .sum({ total: 'amount_micro' })
      .count({ n: '*' })) as Array<{ total: string | null; n: string }>;
    return {
      seller_id: seller.id,
      payout_mode: seller.payout_mode,
      accrued_usd: formatUsd(accrued),
      counts: 'verified' as const,
      pending_usd: formatUsd(BigInt(pending?.total ?? 0)),
      pending_count: Number(pending?.n ?? 0),
      advance_usd: formatUsd(BigInt(payables?.advance_micro ?? 0)),
      flushes: page.map((f) => ({ id: f.id, amount_usd: formatUsd(BigInt(f.amount_micro)), created_at: f.created_at.toISOString() })),
      next_cursor: nextCursor,
    };
  }

  /**
   * What the seller earned in platform_mor mode with verified rows and was not paid yet: one row
   * (seller_payables), kept by triggers in the transaction of each row's verification and each flush
   * (migrations 20261125160000, 20261125200400), so a read costs the same after a million ledger rows as after one.
   */
  private async accruedMicro(seller: SellerRow, trx: Knex | Knex.Transaction = this.knex, forUpdate = false): Promise<bigint> {
    const query = trx('seller_payables').where({ seller_id: seller.id }).first('earned_micro', 'paid_micro');
    const row = (await (forUpdate ? query.forUpdate() : query)) as { earned_micro: string; paid_micro: string } | undefined;
    return row ? BigInt(row.earned_micro) - BigInt(row.paid_micro) : 0n;
  }

  /** Records a payout of everything accrued from verified rows (platform_mor only), serialised per seller; answers the payouts' first page. */
  async flushPayouts(seller: SellerRow, actor: string, request: PageRequest) {
    if (seller.payout_mode === 'direct') throw new AppError('payouts_not_applicable');
    await this.knex.transaction(async (trx) => {
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 17))', [`payout:${seller.id}`]);
      // The row is locked too: a ledger entry committing meanwhile waits, and is paid by the next flush.
      const accrued = await this.accruedMicro(seller, trx, true);
      if (accrued > 0n) await trx('payout_flushes').insert({ id: generateId('po_'), seller_id: seller.id, amount_micro: accrued.toString(), created_by: actor, created_at: this.clock() });
    });
    return this.payouts(seller, request);
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

  async report(
    seller: SellerRow,
    input: { tx_hash: string; payer: string; amount: string; network: string; endpoint_id?: string | undefined; method?: string | undefined; route?: string | undefined; content_hash?: string | undefined; nonce?: string | undefined },
  ): Promise<{ created: boolean; entry: LedgerEntryView }> {
    let endpointId: string | null = null;
    if (input.endpoint_id) {
      const pinned = await this.knex('endpoints').where({ id: input.endpoint_id, seller_id: seller.id }).first('id');
      if (!pinned) throw new AppError('endpoint_not_found');
      endpointId = pinned.id;
    } else if (input.route) {
      // The exact path on the UNIQUE (seller_id, method, path) index; only without one, the patterned endpoints
      // (every report read all of the seller's endpoints before).
      const method = (input.method ?? 'GET').toUpperCase();
      const exact = await this.knex('endpoints').where({ seller_id: seller.id, method, path: input.route }).first('id');
      const patterned = exact ? [] : ((await this.knex('endpoints').where({ seller_id: seller.id, method }).whereNotNull('path_pattern').orderBy([{ column: 'created_at' }, { column: 'id' }]).select('id', 'path_pattern')) as Array<Pick<EndpointRow, 'id' | 'path_pattern'>>);
      endpointId = exact?.id ?? patterned.find((e) => matchPathPattern(e.path_pattern!, input.route!))?.id ?? null;
    }
    let authorizationId: string | null = null;
    let decisionId: string | null = null;
    if (input.nonce) {
      // Authorizations hold the wallet's checksummed address: an exact match on the UNIQUE (from_address,
      // scheme, nonce) index, where lower(from_address) would read the whole table at every report.
      const auth = await this.knex('authorizations')
        .where({ from_address: getAddress(input.payer.toLowerCase()) })
        .whereIn('scheme', ['exact', 'upto'])
        .andWhere({ nonce: input.nonce.toLowerCase() })
        .first('id', 'decision_id');
      if (auth) {
        authorizationId = auth.id;
        decisionId = auth.decision_id;
      }
    }
    // Stored pending: it counts once verified on chain (./ledger-verifier.ts). Why it cannot be checked yet, if so.
    const hasPayTo = !!(await this.knex('sellers_pay_to').where({ seller_id: seller.id }).first('address'));
    const reason = this.ledgerVerifier?.unreachableReason(input.network) ?? (hasPayTo ? 'awaiting_verification' : 'pay_to_not_registered');
    const now = this.clock();
    const row = {
      id: generateId('led_'),
      seller_id: seller.id,
      endpoint_id: endpointId,
      tx_hash: input.tx_hash.toLowerCase(),
      payer: input.payer,
      amount_micro: input.amount,
      network: input.network,
      method: input.method ?? null,
      route: input.route ?? null,
      content_hash: input.content_hash ?? null,
      authorization_id: authorizationId,
      decision_id: decisionId,
      payout_mode: seller.payout_mode,
      status: 'pending',
      reason,
      next_check_at: reason === 'awaiting_verification' || !this.ledgerVerifier ? now : this.ledgerVerifier.parkedUntil(),
      created_at: now,
    };
    // Idempotent per seller: another seller's report of the same transaction does not block this one — the
    // chain decides whose it is (a transfer to another seller's pay-to is rejected, recipient_mismatch).
    const inserted = await this.knex('ledger_entries').insert(row).onConflict(['seller_id', 'tx_hash']).ignore().returning('id');
    const stored = await this.knex('ledger_entries').where({ seller_id: seller.id, tx_hash: row.tx_hash }).first();
    if (inserted.length > 0) this.ledgerVerifier?.nudge();
    return { created: inserted.length > 0, entry: ledgerView(stored) };
  }

  /**
   * Adds `address` to the seller's pay-to addresses, proven by its EIP-191 signature of payToClaimMessage: only
   * the key holder can make transfers to it count as this seller's revenue. The seller's pending rows that
   * waited for a pay-to address become due for verification. Answers every address of the seller.
   */
  async registerPayTo(seller: SellerRow, input: { address: string; signature: string }) {
    const address = getAddress(input.address.toLowerCase());
    const valid = await verifyMessage({ address, message: payToClaimMessage(seller.id, address), signature: input.signature as Hex }).catch(() => false);
    if (!valid) throw new AppError('pay_to_signature_invalid', { fields: { address, message: payToClaimMessage(seller.id, address) } });
    const now = this.clock();
    await this.knex('sellers_pay_to').insert({ seller_id: seller.id, address: address.toLowerCase(), signature: input.signature.toLowerCase(), created_at: now }).onConflict(['seller_id', 'address']).ignore();
    // Rows waiting for a pay-to, and rows that paid an address the seller had not proved yet, are checked (again).
    await this.knex('ledger_entries')
      .where({ seller_id: seller.id })
      .andWhere((q) => q.where({ status: 'pending', reason: 'pay_to_not_registered' }).orWhere({ status: 'rejected', reason: 'recipient_mismatch' }))
      .update({ status: 'pending', reason: 'awaiting_verification', next_check_at: now });
    this.ledgerVerifier?.nudge();
    return this.payTo(seller);
  }

  /** The seller's proven pay-to addresses, oldest first. */
  async payTo(seller: SellerRow) {
    const rows = (await this.knex('sellers_pay_to').where({ seller_id: seller.id }).orderBy([{ column: 'created_at' }, { column: 'address' }]).select('address', 'created_at')) as Array<{ address: string; created_at: Date }>;
    return { seller_id: seller.id, pay_to: rows.map((r) => ({ address: getAddress(r.address.trim()), created_at: r.created_at.toISOString() })) };
  }

  /** A page of the seller's ledger rows, newest first, of every status (or the one asked for). */
  async ledger(seller: SellerRow, q: PageRequest & { from?: Date | undefined; to?: Date | undefined; endpoint_id?: string | undefined; status?: LedgerStatus | undefined }) {
    const rows = this.ledgerRows(seller, q);
    if (q.status) rows.andWhere({ status: q.status });
    const { page, nextCursor } = await readKeysetPage<{ created_at: Date; id: string }>(rows, q, LEDGER_ENTRY_ID, 'desc');
    return { entries: page.map(ledgerView), next_cursor: nextCursor };
  }

  /**
   * Totals by endpoint within `from`/`to`, of verified rows only: whole UTC days from seller_revenue_days (kept
   * by a trigger with each row's verification), the part of a day at either edge from the rows
   * (./split-revenue-range.ts), so its cost follows the days in the range, not the rows. `pending` and
   * `rejected` say what is not counted (read from the unverified rows only, on their partial index).
   */
  async revenue(seller: SellerRow, q: { from?: Date | undefined; to?: Date | undefined; endpoint_id?: string | undefined }) {
    const split = splitRevenueRange(q.from, q.to);
    const byEndpoint = new Map<string, { total: bigint; count: number }>();
    const add = (key: string, total: string, count: string) => {
      const entry = byEndpoint.get(key) ?? { total: 0n, count: 0 };
      byEndpoint.set(key, { total: entry.total + BigInt(total), count: entry.count + Number(count) });
    };
    for (const range of split.rows) {
      const rows = (await this.ledgerRows(seller, { ...range, endpoint_id: q.endpoint_id }).andWhere({ status: 'verified' }).select('endpoint_id').sum({ total: 'amount_micro' }).count({ n: '*' }).groupBy('endpoint_id')) as Array<{ endpoint_id: string | null; total: string; n: string }>;
      for (const r of rows) add(r.endpoint_id ?? '', r.total, r.n);
    }
    if (split.days) {
      const days = this.knex('seller_revenue_days').where({ seller_id: seller.id });
      if (split.days.first) days.andWhere('day', '>=', split.days.first);
      if (split.days.end) days.andWhere('day', '<', split.days.end);
      if (q.endpoint_id) days.andWhere({ endpoint_key: q.endpoint_id });
      const rows = (await days.select('endpoint_key').sum({ total: 'total_micro' }).sum({ n: 'entries' }).groupBy('endpoint_key')) as Array<{ endpoint_key: string; total: string; n: string }>;
      for (const r of rows) add(r.endpoint_key, r.total, r.n);
    }
    const endpoints = [...byEndpoint.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const unverified = (await this.ledgerRows(seller, q).whereNot({ status: 'verified' }).select('status').sum({ total: 'amount_micro' }).count({ n: '*' }).groupBy('status')) as Array<{
      status: string;
      total: string;
      n: string;
    }>;
    const of = (status: string) => {
      const r = unverified.find((u) => u.status === status);
      return { count: Number(r?.n ?? 0), total_usd: formatUsd(BigInt(r?.total ?? 0)) };
    };
    return {
      seller_id: seller.id,
      counts: 'verified' as const,
      pending: of('pending'),
      rejected: of('rejected'),
      total_usd: formatUsd(endpoints.reduce((acc, [, e]) => acc + e.total, 0n)),
      count: endpoints.reduce((acc, [, e]) => acc + e.count, 0),
      by_endpoint: endpoints.map(([key, e]) => ({ endpoint_id: key === '' ? null : key, total_usd: formatUsd(e.total), count: e.count })),
    };
  }

  /** The seller's ledger rows within `from` (inclusive) and `to` (exclusive), for one endpoint when given. */
  private ledgerRows(seller: SellerRow, q: { from?: Date | undefined; to?: Date | undefined; endpoint_id?: string | undefined }): Knex.QueryBuilder {
    const query = this.knex('ledger_entries').where({ seller_id: seller.id });
    if (q.from) query.andWhere('created_at', '>=', q.from);
    if (q.to) query.andWhere('created_at', '<', q.to);
    if (q.endpoint_id) query.andWhere({ endpoint_id: q.endpoint_id });
    return query;
  }

  /**
   * The seller's ledger as CSV, oldest first, within `from`/`to` and for one endpoint when given: read in
   * keyset pages of 1,000 rows and streamed, so an export of any size holds one page in memory. A database
   * failure part-way ends the stream with an error, and the client sees the response cut short.
   */
  exportCsv(seller: SellerRow, q: { from?: Date | undefined; to?: Date | undefined; endpoint_id?: string | undefined } = {}): Readable {
    const rowsAfter = (after: { created_at: Date; id: string } | undefined) => {
      const query = this.ledgerRows(seller, q).orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(EXPORT_PAGE_ROWS);
      return (after ? whereAfter(query, { at: after.created_at, id: after.id }) : query) as Promise<Array<Record<string, any>>>;
    };
    const header = 'created_at,id,tx_hash,payer,amount_usd,network,endpoint_id,method,route,content_hash,authorization_id,decision_id,status,reason';
    const cell = (v: unknown) => {
      const s = v === null || v === undefined ? '' : String(v);
      // Quote everything that could break a row or be read as a formula by a spreadsheet.
      return /[",\n\r]|^[=+\-@\t]/.test(s) ? `"${s.replace(/"/g, '""').replace(/^([=+\-@\t])/, "'$1")}"` : s;
    };
    async function* lines(): AsyncGenerator<string> {
      yield `${header}\n`;
      let after: { created_at: Date; id: string } | undefined;
      for (;;) {
        const rows = await rowsAfter(after);
        if (rows.length > 0) {
          yield rows
            .map((r) => {
              const v = ledgerView(r);
              return [v.created_at, v.id, v.tx_hash, v.payer, v.amount_usd, v.network, v.endpoint_id, v.method, v.route, v.content_hash, v.authorization_id, v.decision_id, v.status, v.reason].map(cell).join(',') + '\n';
            })
            .join('');
        }
        if (rows.length < EXPORT_PAGE_ROWS) return;
        after = rows[rows.length - 1] as { created_at: Date; id: string };
      }
    }
    return Readable.from(lines(), { objectMode: false });
  }
}

function ledgerView(r: Record<string, any>) {
  return {
    id: r.id as string,
    seller_id: r.seller_id as string,
    endpoint_id: r.endpoint_id as string | null,
    tx_hash: (r.tx_hash as string).trim(),
    payer: (r.payer as string).trim(),
    amount_usd: formatUsd(BigInt(r.amount_micro)),
    amount: String(r.amount_micro),
    network: r.network as string,
    method: r.method as string | null,
    route: r.route as string | null,
    content_hash: r.content_hash as string | null,
    authorization_id: r.authorization_id as string | null,
    decision_id: r.decision_id as string | null,
    /** pending until verified on chain; only verified rows count toward revenue and payables. */
    status: r.status as LedgerStatus,
    /** Why a row is pending or rejected (stable snake_case); null once verified. */
    reason: (r.reason as string | null) ?? null,
    confirmations: (r.confirmations as number | null) ?? null,
    verified_at: (r.verified_at as Date | null)?.toISOString() ?? null,
    created_at: (r.created_at as Date).toISOString(),
  };
}

export type LedgerStatus = 'pending' | 'verified' | 'rejected';
export type LedgerEntryView = ReturnType<typeof ledgerView>;

/**
 * Whether any ledger row names the endpoint: one lookup in the seller's per-day revenue (seller_revenue_days,
 * on its primary key's seller prefix, verified rows) and one among its unverified rows (their partial index),
 * rather than a scan of every ledger row, which has no endpoint index.
 */
async function endpointHasLedger(knex: Knex | Knex.Transaction, sellerId: string, endpointId: string): Promise<boolean> {
  if (await knex('seller_revenue_days').where({ seller_id: sellerId, endpoint_key: endpointId }).first('day')) return true;
  return !!(await knex('ledger_entries').where({ seller_id: sellerId, endpoint_id: endpointId }).whereNot({ status: 'verified' }).first('id'));
}

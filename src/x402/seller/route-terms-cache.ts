/**
 * The terms a paid request is offered (./offered-terms.ts with its Bazaar declaration, ./bazaar-declaration.ts)
 * and its plain 402 challenge (`payment_required`, ./paywall-answers.ts), built once per route and reused:
 * nothing in them depends on the request beyond what the key names — the site's configuration (by identity),
 * method, URL, path and prefix, price, the EVM pay-to the seller's state names, and the Solana terms of the
 * moment (by identity: a refreshed fee payer or token account makes new terms). A challenge is validated and
 * encoded once per route instead of once per request.
 *
 * Defends against: a challenge that no longer says what the seller offers (any change of an input is a new key
 * or a new Solana object, so a stale entry is never served); unbounded memory from buyers' URLs (at most
 * `maxEntries` per configuration; the map is emptied when full). Does not defend against: callers mutating the
 * terms or answers they get (they are shared: the paywall only reads them and builds new objects from them).
 */
import { withBazaar } from './bazaar-declaration.js';
import { collectTo, offeredTermsWith, solanaNow } from './offered-terms.js';
import type { PaidRequest, PaidRequestDeps, PaidSite } from './paid-request-port.js';
import type { RouteTerms } from './payment-terms.js';
import { challengeAnswer, type PaywallAnswer } from './paywall-answers.js';
import type { SellerState } from './seller-identity.js';
import type { ResolvedX402Config } from './seller-options.js';
import type { SolanaTermsNow } from './solana-terms.js';

interface Entry {
  solana: SolanaTermsNow | undefined;
  terms: RouteTerms | undefined;
  challenge?: PaywallAnswer;
}

const DEFAULT_MAX_ENTRIES = 1024;

export class RouteTermsCache {
  private readonly byConfig = new WeakMap<ResolvedX402Config, Map<string, Entry>>();
  /** Which entry a terms object came from, for its challenge. */
  private readonly entryOf = new WeakMap<RouteTerms, Entry>();

  constructor(
    private readonly deps: Pick<PaidRequestDeps, 'facilitator' | 'solanaFacilitator'>,
    private readonly maxEntries = DEFAULT_MAX_ENTRIES,
  ) {}

  /** The terms of `req` at `price` (undefined: nothing can be offered now; the paywall answers 503). */
  async termsFor(
    site: PaidSite,
    req: PaidRequest,
    price: bigint,
    seller: Exclude<SellerState, { kind: 'misconfigured' }>,
  ): Promise<RouteTerms | undefined> {
    const { config } = site;
    const solana = await solanaNow(this.deps, site, seller);
    let entries = this.byConfig.get(config);
    if (!entries) this.byConfig.set(config, (entries = new Map()));
    const key = [req.method, req.href, req.path, req.prefix ?? '', price, collectTo(seller) ?? ''].join('\n');
    const cached = entries.get(key);
    if (cached && cached.solana === solana) return cached.terms;
    const offered = offeredTermsWith(this.deps, config, req.href, price, seller, solana);
    const terms = offered && withBazaar(offered, config.discovery, req);
    if (entries.size >= this.maxEntries) entries.clear();
    const entry: Entry = { solana, terms };
    entries.set(key, entry);
    if (terms) this.entryOf.set(terms, entry);
    return terms;
  }

  /** The 402 challenge of `terms` for a request without a payment, encoded once. */
  paymentRequired(terms: RouteTerms): PaywallAnswer {
    const entry = this.entryOf.get(terms);
    if (!entry) return challengeAnswer(terms, 'payment_required');
    entry.challenge ??= challengeAnswer(terms, 'payment_required');
    return entry.challenge;
  }
}

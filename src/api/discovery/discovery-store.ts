/**
 * Reads one page of the public catalogue in one statement: the priced endpoints of every seller that is
 * active, has a verified origin, and sells either through its own middleware (`x402`, listed at its origin) or
 * through its account's gate (`mpp`, listed at `<gate URL>/<slug>` once the platform verified that gate's
 * address: src/api/sellers/gate-address/); where its buyers pay on the
 * catalogue's network (a `platform_mor` seller's collection wallet there, else its oldest proven pay-to
 * address, as the gate is told: src/api/sellers/gate/gate-service.ts); how many resources match in all; and,
 * for the page's rows only, their verified revenue and paid calls on the catalogue's network since a day, from
 * `seller_revenue_days` (which counts a ledger row only once it is verified on chain, per network:
 * migrations/20261125200400_ledger_verification.ts, 20261201140000_seller_revenue_networks.ts) and their uptime
 * counts as the sellers' gates reported them (`endpoint_uptime_hours`).
 *
 * The order is turns (`turnOrder`): after the search score, every account's first listing comes before any
 * account's second, and inside an account its sellers take turns the same way; ties between accounts go to the
 * older account. A name, slug or path chosen to sort first moves a listing only among its own seller's, so one
 * account with many sellers and endpoints cannot fill the pages a client can reach (offset 10,000 at most).
 *
 * Defends: an unverified or suspended seller, or a managed-proxy seller whose gate address is not verified,
 * listed (the WHERE clause, in one place), or listed at an address its gate does not answer at; an
 * endpoint without a known pay-to listed (a buyer could not pay it); unverified ledger reports, or payments on
 * another network (a testnet's free USDC on a mainnet catalogue), counted; one account crowding every other out
 * of the reachable pages; the search text read as SQL or as a pattern (bound `%term%` values with their wildcards
 * escaped, ./discovery-search-terms.ts); a search's cost growing with the schemas endpoints declare (it matches
 * the description column, never the `discovery` JSON, and builds each row's text once). Does not defend: one party running many accounts (each takes its own
 * turn; an account created earlier goes first among equals); a seller whose text names more of the searched terms
 * ranking above (the score comes first); a large catalogue's count and turns (every page counts and ranks all the
 * matches, one scan and sorts of them; the answer is cached briefly: ./discovery-cache.ts).
 */
import type { Knex } from 'knex';

/** One listed endpoint as the statement reads it (bigint sums as text). */
export interface DiscoveryRow {
  endpoint_id: string;
  endpoint_slug: string;
  method: string;
  path: string;
  path_pattern: string | null;
  price_micro: string;
  capabilities: string[];
  discovery: Record<string, unknown> | null;
  endpoint_updated_at: Date;
  seller_id: string;
  seller_slug: string;
  seller_name: string;
  origin: string;
  /** Where the seller's routes are bought: its origin, or its gate's verified URL and `/<slug>`. */
  resource_base: string;
  seller_updated_at: Date;
  pay_to: string;
  /** Verified revenue and paid calls on the request's network since its `since` (bigint sums as text). */
  revenue_micro: string;
  paid_calls: string;
  /** Gate-reported uptime counts since `uptimeSince` (bigint sums as text). */
  uptime_answered: string;
  uptime_failed: string;
}

export interface DiscoveryPageRequest {
  /** The network buyers are asked to pay on (collection wallets are per network), and whose revenue counts. */
  network: string;
  /** Lower-case `0x…`: only resources paying this address. */
  payTo?: string | undefined;
  /** `%term%` ILIKE patterns (escaped); a resource matches when any term does, best matches first. */
  patterns?: readonly string[] | undefined;
  /** Revenue and paid calls count from this UTC day (`YYYY-MM-DD`) on (and uptime from its midnight). */
  since: string;
  limit: number;
  offset: number;
}

export interface DiscoveryPage {
  rows: DiscoveryRow[];
  total: number;
}

/**
 * Which sellers and endpoints the catalogue lists, besides a known payee (`pay_to IS NOT NULL`): the one
 * predicate, over `sellers s` and `endpoints e`, that the public pages and a seller's own view
 * (./seller-listing-store.ts) both use.
 */
export const LISTED_SELLER_AND_ENDPOINT = `s.status = 'active' AND s.origin IS NOT NULL AND s.verified_at IS NOT NULL
            AND e.priced AND (s.protocol = 'x402' OR (s.protocol = 'mpp' AND g.verified_at IS NOT NULL))`;

/** The account's gate address (`g`), joined for a managed-proxy seller whose gate sells on the network bound. */
const GATE_JOIN = `LEFT JOIN gate_addresses g ON g.account_id = s.account_id AND s.protocol = 'mpp' AND g.network = ?`;

/**
 * Where a listed seller's routes are bought: a middleware seller at its origin, a managed-proxy seller through
 * its gate by path prefix (`<gate URL>/<slug>`: the gate routes every seller that way, whatever its host routing,
 * and it is the address the platform proved).
 */
export const RESOURCE_BASE_SQL = `CASE WHEN s.protocol = 'mpp' THEN g.url || '/' || s.slug ELSE s.origin END`;

/** Where buyers of seller `s` pay (over the joins `c` and `p` below, as the gate is told). */
export const PAY_TO_SQL = `lower(trim(CASE WHEN s.payout_mode = 'platform_mor' THEN c.address ELSE p.address END))`;

/**
 * What the predicate and the payee read: where buyers of seller `s` pay on the network bound first (joins `c` and
 * `p`; the catalogue's networks are EVM, so only a 0x pay-to counts — a Solana address proven first is not an EVM
 * payee, and one such seller must not fail the whole page), and the account's gate address (`g`) when its gate sells on the network bound second (the same network:
 * bind it twice).
 */
export const LISTING_JOINS = `LEFT JOIN platform_collection_wallets c ON c.seller_id = s.id AND c.network = ?
           LEFT JOIN LATERAL (
             SELECT address FROM sellers_pay_to sp
              WHERE sp.seller_id = s.id AND left(sp.address, 2) = '0x'
              ORDER BY created_at, address LIMIT 1
           ) p ON true
           ${GATE_JOIN}`;

/**
 * What a search term is matched against: names, slugs, the route, capabilities and the declared description —
 * `e.discovery_description`, the column PostgreSQL keeps from `discovery` (migrations/20261201151700_endpoint_discovery_description.ts),
 * never `discovery` itself, whose schemas (up to 64 KiB, stored out of line) reading one key of it would fetch
 * and decompress whole. Lower-cased, once per row (`h.text`: the `OFFSET 0` keeps the planner from copying the
 * expression into each term's match), and each term's pattern lower-cased by the same function: `lower(a) LIKE
 * lower(p)` is what PostgreSQL's ILIKE does in a multi-byte encoding, here with the row's text lowered once
 * instead of once per term.
 */
const HAYSTACK = `lower(concat_ws(' ', s.name, s.slug, e.slug, e.method, e.path, e.capabilities::text, e.discovery_description))`;

/** The score of a row: how many of the terms it matches (0 without a search), over `h.text` (`haystackJoin`). */
function scoreSql(patterns: readonly string[]): { sql: string; bindings: string[] } {
  if (patterns.length === 0) return { sql: '0', bindings: [] };
  return {
    sql: patterns.map(() => `(h.text LIKE lower(?) ESCAPE '\\')::int`).join(' + '),
    bindings: [...patterns],
  };
}

/** The row's haystack as `h.text`, computed once per listed row; nothing without a search. */
const haystackJoin = (patterns: readonly string[]) =>
  patterns.length === 0 ? '' : `CROSS JOIN LATERAL (SELECT ${HAYSTACK} AS text OFFSET 0) h`;

/**
 * The catalogue's order over ranked matches `t` (the `turns` below, or the page cut from them): the score first (a
 * search's best matches; 0 without one); then `account_rank`, a listing's place among its account's matches of that
 * score, where the account's sellers take turns (`seller_rank`, a listing's place among its seller's by route; the
 * older seller first in a turn); then the older account, and its id. An account has one listing per rank and
 * score, so this is a total order: every page of one answer is cut from the same sequence, whatever its size.
 */
const turnOrder = (t: string) => `${t}.score DESC, ${t}.account_rank, ${t}.account_created_at, ${t}.account_id`;

export class DiscoveryStore {
  constructor(private readonly knex: Knex) {}

  async page(request: DiscoveryPageRequest): Promise<DiscoveryPage> {
    const patterns = request.patterns ?? [];
    const score = scoreSql(patterns);
    const where = ['l.pay_to IS NOT NULL'];
    const whereBindings: string[] = [];
    if (request.payTo !== undefined) {
      where.push('l.pay_to = ?');
      whereBindings.push(request.payTo);
    }
    if (patterns.length > 0) where.push('l.score > 0');
    // Turns are ranked over narrow rows (ids, keys, score), so the sorts over every match stay small; only the
    // page's rows read the rest of their match, their endpoint and their seller (one statement: one snapshot).
    const result = await this.knex.raw(
      `WITH listed AS (
         SELECT e.id AS endpoint_id, e.method AS endpoint_method, e.path AS endpoint_path,
                s.id AS seller_id, s.created_at AS seller_created_at,
                s.account_id, a.created_at AS account_created_at,
                ${RESOURCE_BASE_SQL} AS resource_base,
                ${PAY_TO_SQL} AS pay_to,
                ${score.sql} AS score
           FROM endpoints e
           JOIN sellers s ON s.id = e.seller_id
           JOIN accounts a ON a.id = s.account_id
           ${LISTING_JOINS}
           ${haystackJoin(patterns)}
          WHERE ${LISTED_SELLER_AND_ENDPOINT}
       ),
       matched AS (SELECT l.* FROM listed l WHERE ${where.join(' AND ')}),
       turns AS (
         SELECT r.endpoint_id, r.score, r.account_id, r.account_created_at,
                row_number() OVER (PARTITION BY r.score, r.account_id
                                   ORDER BY r.seller_rank, r.seller_created_at, r.seller_id) AS account_rank
           FROM (SELECT m.endpoint_id, m.score, m.account_id, m.account_created_at, m.seller_id, m.seller_created_at,
                        row_number() OVER (PARTITION BY m.score, m.seller_id
                                           ORDER BY m.endpoint_path, m.endpoint_method, m.endpoint_id) AS seller_rank
                   FROM matched m) r
       ),
       page AS (
         SELECT m.*, p.account_rank
           FROM (SELECT * FROM turns ORDER BY ${turnOrder('turns')} LIMIT ? OFFSET ?) p
           JOIN matched m ON m.endpoint_id = p.endpoint_id
       )
       SELECT t.total, page.endpoint_id, e.slug AS endpoint_slug, e.method, e.path, e.path_pattern, e.price_micro,
              e.capabilities, e.discovery, e.updated_at AS endpoint_updated_at,
              page.seller_id, s.slug AS seller_slug, s.name AS seller_name, s.origin, page.resource_base,
              s.updated_at AS seller_updated_at, page.pay_to,
              COALESCE(r.revenue_micro, 0)::text AS revenue_micro, COALESCE(r.paid_calls, 0)::text AS paid_calls,
              COALESCE(u.answered, 0)::text AS uptime_answered, COALESCE(u.failed, 0)::text AS uptime_failed
         FROM (SELECT count(*) AS total FROM matched) t
         LEFT JOIN page ON true
         LEFT JOIN endpoints e ON e.id = page.endpoint_id
         LEFT JOIN sellers s ON s.id = page.seller_id
         LEFT JOIN LATERAL (
           SELECT sum(d.total_micro) AS revenue_micro, sum(d.entries) AS paid_calls
             FROM seller_revenue_days d
            WHERE d.seller_id = page.seller_id AND d.endpoint_key = page.endpoint_id AND d.network = ?
              AND d.day >= ?::date
         ) r ON page.endpoint_id IS NOT NULL
         LEFT JOIN LATERAL (
           SELECT sum(h.answered) AS answered, sum(h.failed) AS failed
             FROM endpoint_uptime_hours h
            WHERE h.endpoint_id = page.endpoint_id AND h.hour >= ?::date::timestamp AT TIME ZONE 'UTC'
         ) u ON page.endpoint_id IS NOT NULL
        ORDER BY ${turnOrder('page')}`,
      [
        ...score.bindings,
        request.network,
        request.network,
        ...whereBindings,
        request.limit,
        request.offset,
        request.network,
        request.since,
        request.since,
      ],
    );
    const rows = (result as { rows: Array<DiscoveryRow & { total: string }> }).rows;
    return {
      total: Number(rows[0]?.total ?? 0),
      rows: rows.filter((r) => r.endpoint_id !== null).map(({ total: _total, ...row }) => row),
    };
  }
}

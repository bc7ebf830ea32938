/**
 * One seller's endpoints as the public catalogue sees them, in one statement: whether each is listed (the
 * catalogue's own predicate, `LISTED_SELLER_AND_ENDPOINT` of ./discovery-store.ts, and a known payee), the facts
 * that explain why not, and its verified revenue and paid calls on the catalogue's network (as the catalogue counts
 * them) and gate-reported uptime since a day. At most 1,000 endpoints (a seller's limit is lower).
 *
 * Defends: the seller's view and the public catalogue disagreeing on what is listed (one predicate). Does not
 * defend: who may read it (the route authorizes the seller first).
 */
import type { Knex } from 'knex';
import { LISTED_SELLER_AND_ENDPOINT, LISTING_JOINS, PAY_TO_SQL } from './discovery-store.js';

export interface SellerListingRow {
  endpoint_id: string;
  method: string;
  path: string;
  price_micro: string;
  priced: boolean;
  status: string;
  protocol: string;
  origin: string | null;
  origin_verified: boolean;
  /** A managed-proxy seller whose account's gate address the platform verified. */
  gate_verified: boolean;
  pay_to: string | null;
  listed: boolean;
  revenue_micro: string;
  paid_calls: string;
  uptime_answered: string;
  uptime_failed: string;
}

export class SellerListingStore {
  constructor(private readonly knex: Knex) {}

  /** `sellerId`'s endpoints; payees, revenue and calls on `network`; revenue, calls and uptime from the UTC day `since` on. */
  async endpointsOf(sellerId: string, network: string, since: string): Promise<SellerListingRow[]> {
    const result = await this.knex.raw(
      `SELECT e.id AS endpoint_id, e.method, e.path, e.price_micro, e.priced, s.status, s.protocol, s.origin,
              (s.verified_at IS NOT NULL) AS origin_verified,
              (g.verified_at IS NOT NULL) AS gate_verified, ${PAY_TO_SQL} AS pay_to,
              (${LISTED_SELLER_AND_ENDPOINT} AND ${PAY_TO_SQL} IS NOT NULL) AS listed,
              COALESCE(r.revenue_micro, 0)::text AS revenue_micro, COALESCE(r.paid_calls, 0)::text AS paid_calls,
              COALESCE(u.answered, 0)::text AS uptime_answered, COALESCE(u.failed, 0)::text AS uptime_failed
         FROM endpoints e
         JOIN sellers s ON s.id = e.seller_id
           ${LISTING_JOINS}
         LEFT JOIN LATERAL (
           SELECT sum(d.total_micro) AS revenue_micro, sum(d.entries) AS paid_calls
             FROM seller_revenue_days d
            WHERE d.seller_id = s.id AND d.endpoint_key = e.id AND d.network = ? AND d.day >= ?::date
         ) r ON true
         LEFT JOIN LATERAL (
           SELECT sum(h.answered) AS answered, sum(h.failed) AS failed
             FROM endpoint_uptime_hours h
            WHERE h.endpoint_id = e.id AND h.hour >= ?::date::timestamp AT TIME ZONE 'UTC'
         ) u ON true
        WHERE e.seller_id = ?
        ORDER BY e.path, e.method, e.id
        LIMIT 1000`,
      [network, network, network, since, since, sellerId],
    );
    return (result as { rows: SellerListingRow[] }).rows;
  }
}

/**
 * Reads the sellers that hold a payee, in one prepared statement, and where each of them was proven to sell
 * (../challenge-origin-binding.ts decides on it): the seller whose collection wallet the address is on the network
 * (platform_collection_wallets, unique per network and address), every seller that proved it as a pay-to
 * (sellers_pay_to), each with its origin and whether it is verified, its slug, and for a managed-proxy seller its
 * account's gate address and base domain and whether each is verified.
 *
 * Defends: an unbounded read (at most MAX_PAYEE_OWNERS + 1 owners, the extra one only to say there were more); a
 * payee spelled in another case missing its owners (an EVM address is compared lower-case, as both tables store
 * it; a base58 one exactly, as its case names another key). A pay-to is found by address on the index of
 * migration 20261203110000 (sellers_pay_to_address); ../payee-bindings.ts reads each payee once per
 * PAYEE_BINDING_TTL_MS.
 */
import type { Knex } from 'knex';
import { runStatement } from '../../db/wallet-transaction.js';
import { MAX_PAYEE_OWNERS, type PayeeOwner } from '../challenge-origin-binding.js';

const PAYEE_OWNERS_SQL = `SELECT s.id AS seller_id, s.protocol, s.origin, s.verified_at IS NOT NULL AS origin_verified,
       s.slug, g.url AS gate_url, g.verified_at IS NOT NULL AS gate_verified,
       g.base_domain AS gate_base_domain, g.base_domain_verified_at IS NOT NULL AS gate_base_domain_verified
  FROM (SELECT seller_id FROM platform_collection_wallets WHERE network = ? AND address = ?
        UNION
        SELECT seller_id FROM sellers_pay_to WHERE address = ?
        ORDER BY seller_id LIMIT ${MAX_PAYEE_OWNERS + 1}) o
  JOIN sellers s ON s.id = o.seller_id
  LEFT JOIN gate_addresses g ON g.account_id = s.account_id AND s.protocol = 'mpp'
 ORDER BY s.id`;

interface OwnerRow {
  seller_id: string;
  protocol: string;
  origin: string | null;
  origin_verified: boolean;
  slug: string;
  gate_url: string | null;
  gate_verified: boolean;
  gate_base_domain: string | null;
  gate_base_domain_verified: boolean;
}

/** A payee as its owners' rows store it: an EVM address lower-case, a base58 one as spelled. */
export const storedPayee = (payTo: string): string => (payTo.startsWith('0x') ? payTo.toLowerCase() : payTo);

export class PgPayeeOwners {
  constructor(private readonly knex: Knex) {}

  /** The owners of `payTo` on `network` (a CAIP-2 id), at most MAX_PAYEE_OWNERS; `truncated` when there were more. */
  async ownersOf(network: string, payTo: string): Promise<{ owners: PayeeOwner[]; truncated: boolean }> {
    const payee = storedPayee(payTo);
    const rows = await runStatement<OwnerRow>(
      this.knex,
      PAYEE_OWNERS_SQL,
      [network, payee, payee],
      'treasury_payee_owners_v2',
    );
    const owners = rows.slice(0, MAX_PAYEE_OWNERS).map((r) => ({
      sellerId: r.seller_id,
      protocol: r.protocol,
      origin: r.origin,
      originVerified: r.origin_verified,
      gateUrl: r.gate_url,
      gateVerified: r.gate_verified,
      slug: r.slug,
      gateBaseDomain: r.gate_base_domain,
      gateBaseDomainVerified: r.gate_base_domain_verified,
    }));
    return { owners, truncated: rows.length > MAX_PAYEE_OWNERS };
  }
}

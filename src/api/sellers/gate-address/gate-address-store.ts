/**
 * Where an account's gate address lives (migrations/20261130150000_gate_addresses.ts,
 * 20261203121500_gate_address_base_domain.ts, 20261203140000_proof_rechecks.ts): one row per account, its base URL,
 * the account's gate token and when that URL was last proven; its base domain, if it named one, and when that was
 * last proven. A proof marked here is re-checked one interval later (src/api/sellers/proofs/ owns the schedule).
 *
 * Defends: a changed URL keeping the old one's proof (the upsert clears `verified_at` unless the URL is the
 * same), a changed URL or base domain keeping the domain's proof (cleared unless both are the same: the domain is
 * proven at the URL's scheme and port); a URL or domain changed while the old one was being fetched being marked
 * verified (each mark names what was fetched); two concurrent first calls issuing two tokens (the token is
 * written only on insert). Does not defend: who may call it (the routes scope every call to the gate bearer's
 * account).
 */
import type { Knex } from 'knex';

export interface GateAddressRow {
  account_id: string;
  url: string;
  network: string;
  verification_token: string;
  verified_at: Date | null;
  base_domain: string | null;
  base_domain_verified_at: Date | null;
}

const COLUMNS = 'account_id, url, network, verification_token, verified_at, base_domain, base_domain_verified_at';

export class PgGateAddressStore {
  constructor(private readonly knex: Knex) {}

  async find(accountId: string): Promise<GateAddressRow | undefined> {
    const result = await this.knex.raw(`SELECT ${COLUMNS} FROM gate_addresses WHERE account_id = ?`, [accountId]);
    return (result as { rows: GateAddressRow[] }).rows[0];
  }

  /**
   * Sets the account's URL, network and base domain (null: none; `token` only when the account has none yet); a
   * new URL is unproven, and so is the base domain unless both it and the URL are the ones already there.
   */
  async set(
    accountId: string,
    address: { url: string; network: string; baseDomain: string | null },
    token: string,
  ): Promise<GateAddressRow> {
    const result = await this.knex.raw(
      `INSERT INTO gate_addresses (account_id, url, network, verification_token, base_domain) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE
         SET url = EXCLUDED.url, network = EXCLUDED.network, base_domain = EXCLUDED.base_domain,
             verified_at = CASE WHEN gate_addresses.url = EXCLUDED.url THEN gate_addresses.verified_at END,
             base_domain_verified_at = CASE
               WHEN gate_addresses.url = EXCLUDED.url AND gate_addresses.base_domain = EXCLUDED.base_domain
               THEN gate_addresses.base_domain_verified_at END,
             updated_at = now()
       RETURNING ${COLUMNS}`,
      [accountId, address.url, address.network, token, address.baseDomain],
    );
    return (result as { rows: GateAddressRow[] }).rows[0]!;
  }

  /** Marks `url` proven at `at`, if it is still the account's URL; undefined otherwise. */
  async markVerified(accountId: string, url: string, at: Date): Promise<GateAddressRow | undefined> {
    const result = await this.knex.raw(
      `UPDATE gate_addresses SET verified_at = ?, url_recheck_at = NULL, updated_at = now()
        WHERE account_id = ? AND url = ?
       RETURNING ${COLUMNS}`,
      [at, accountId, url],
    );
    return (result as { rows: GateAddressRow[] }).rows[0];
  }

  /** Marks `baseDomain` proven at `at`, if it and `url` are still the account's; undefined otherwise. */
  async markBaseDomainVerified(
    accountId: string,
    address: { url: string; baseDomain: string },
    at: Date,
  ): Promise<GateAddressRow | undefined> {
    const result = await this.knex.raw(
      `UPDATE gate_addresses SET base_domain_verified_at = ?, base_domain_recheck_at = NULL, updated_at = now()
        WHERE account_id = ? AND url = ? AND base_domain = ?
       RETURNING ${COLUMNS}`,
      [at, accountId, address.url, address.baseDomain],
    );
    return (result as { rows: GateAddressRow[] }).rows[0];
  }
}

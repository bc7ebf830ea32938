/**
 * Where an account's gate address lives (migrations/20261130150000_gate_addresses.ts): one row per account, its
 * base URL, the account's gate token and when that URL was proven.
 *
 * Defends: a changed URL keeping the old one's proof (the upsert clears `verified_at` unless the URL is the
 * same); a URL changed while the old one was being fetched being marked verified (the mark names the URL that
 * was fetched); two concurrent first calls issuing two tokens (the token is written only on insert). Does not
 * defend: who may call it (the routes scope every call to the gate bearer's account).
 */
import type { Knex } from 'knex';

export interface GateAddressRow {
  account_id: string;
  url: string;
  network: string;
  verification_token: string;
  verified_at: Date | null;
}

const COLUMNS = 'account_id, url, network, verification_token, verified_at';

export class PgGateAddressStore {
  constructor(private readonly knex: Knex) {}

  async find(accountId: string): Promise<GateAddressRow | undefined> {
    const result = await this.knex.raw(`SELECT ${COLUMNS} FROM gate_addresses WHERE account_id = ?`, [accountId]);
    return (result as { rows: GateAddressRow[] }).rows[0];
  }

  /** Sets the account's URL and network (`token` only when the account has none yet); a new URL is unproven. */
  async set(accountId: string, address: { url: string; network: string }, token: string): Promise<GateAddressRow> {
    const result = await this.knex.raw(
      `INSERT INTO gate_addresses (account_id, url, network, verification_token) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE
         SET url = EXCLUDED.url, network = EXCLUDED.network,
             verified_at = CASE WHEN gate_addresses.url = EXCLUDED.url THEN gate_addresses.verified_at END,
             updated_at = now()
       RETURNING ${COLUMNS}`,
      [accountId, address.url, address.network, token],
    );
    return (result as { rows: GateAddressRow[] }).rows[0]!;
  }

  /** Marks `url` proven at `at`, if it is still the account's URL; undefined otherwise. */
  async markVerified(accountId: string, url: string, at: Date): Promise<GateAddressRow | undefined> {
    const result = await this.knex.raw(
      `UPDATE gate_addresses SET verified_at = ?, updated_at = now() WHERE account_id = ? AND url = ?
       RETURNING ${COLUMNS}`,
      [at, accountId, url],
    );
    return (result as { rows: GateAddressRow[] }).rows[0];
  }
}

/**
 * Solana wallets (x402 `exact` on SVM): the columns that hold a wallet's address, a payee or an asset were
 * char(42) (an EVM 0x address). A Solana address or mint is base58 of 32 bytes, 32 to 44 characters, and
 * case-sensitive; in char(42) it would be blank-padded (and a 43- or 44-character one refused). They become
 * varchar(44), each with a CHECK of its spelling:
 * - where the row names its network (wallets, authorizations, balance_readings): per family — an `eip155:`
 *   network holds 0x + 40 hex, a `solana:` network base58 of 32–44 characters, and no other network is stored;
 * - where it does not (wallet_keys, policy_decisions): either spelling.
 * The pay tables' altered columns keep ANALYZE's statistics target of 10 (migration 20261124120000).
 * Seller-side tables (ledger, payouts, collection wallets) stay EVM-only.
 */
import type { Knex } from 'knex';

const EVM = `'^0x[0-9a-fA-F]{40}$'`;
const BASE58 = `'^[1-9A-HJ-NP-Za-km-z]{32,44}$'`;

/** Columns widened: table → columns, and the network column that names their family (null: none). */
const COLUMNS: ReadonlyArray<{ table: string; columns: readonly string[]; network: string | null; stats: boolean }> = [
  { table: 'wallets', columns: ['address'], network: 'network', stats: false },
  { table: 'wallet_keys', columns: ['address'], network: null, stats: false },
  { table: 'policy_decisions', columns: ['to_address'], network: null, stats: true },
  { table: 'authorizations', columns: ['asset', 'from_address', 'to_address'], network: 'network', stats: true },
  { table: 'balance_readings', columns: ['asset', 'address'], network: 'network', stats: false },
];

function familyCheck(column: string, network: string | null): string {
  if (network === null) return `(${column} ~ ${EVM} OR ${column} ~ ${BASE58})`;
  return `((${network} LIKE 'eip155:%' AND ${column} ~ ${EVM}) OR (${network} LIKE 'solana:%' AND ${column} ~ ${BASE58}))`;
}

export async function up(knex: Knex): Promise<void> {
  for (const { table, columns, network, stats } of COLUMNS) {
    for (const column of columns) {
      await knex.raw(`ALTER TABLE ?? ALTER COLUMN ?? TYPE varchar(44)`, [table, column]);
      await knex.raw(`ALTER TABLE ?? ADD CONSTRAINT ?? CHECK ${familyCheck(column, network)}`, [
        table,
        `${table}_${column}_spelling`,
      ]);
      if (stats) await knex.raw('ALTER TABLE ?? ALTER COLUMN ?? SET STATISTICS 10', [table, column]);
    }
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const { table, columns } of COLUMNS) {
    for (const column of columns) {
      await knex.raw(`ALTER TABLE ?? DROP CONSTRAINT IF EXISTS ??`, [table, `${table}_${column}_spelling`]);
    }
  }
  // Cached balances can go; Solana wallets and payments cannot: with any of them stored, the narrowing below fails.
  await knex.raw(`DELETE FROM balance_readings WHERE network LIKE 'solana:%'`);
  for (const { table, columns, stats } of COLUMNS) {
    const type = table === 'balance_readings' ? 'varchar(42)' : 'char(42)';
    for (const column of columns) {
      await knex.raw(`ALTER TABLE ?? ALTER COLUMN ?? TYPE ${type}`, [table, column]);
      if (stats) await knex.raw('ALTER TABLE ?? ALTER COLUMN ?? SET STATISTICS 10', [table, column]);
    }
  }
}

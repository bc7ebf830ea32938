/**
 * Seller ledger rows and proven pay-to addresses may be Solana's (docs/seller-middleware.md, "Solana"): a
 * Solana transaction signature is base58 of 64 bytes (up to 88 characters) and an address base58 of 32 bytes
 * (up to 44), where the EVM spellings are 66 and 42 characters. The fixed-width columns become `varchar` of
 * the longer length:
 *   - ledger_entries.tx_hash char(66) → varchar(88), ledger_entries.payer char(42) → varchar(44);
 *   - sellers_pay_to.address char(42) → varchar(44).
 * Each gets a CHECK of its spelling per the row's network family, as migration 20261129120000 does for the pay
 * tables: an `eip155:` row a 0x hash and a 0x payer, a `solana:` row base58 (a signature of 64 to 88
 * characters, an address of 32 to 44); a pay-to is one or the other.
 * Casting from char drops its trailing pad spaces, so existing values read the same (callers trim them
 * anyway). Base58 is case-sensitive: Solana values are stored as given, EVM ones as before (lower-case).
 * The indexes on these columns (UNIQUE (seller_id, tx_hash), the verified-transfer index, the pay-to primary
 * key) are rebuilt by PostgreSQL with the new type.
 *
 * Down: back to the fixed widths; refused by PostgreSQL ("value too long") while a Solana value is stored, so
 * no row is cut short.
 */
import type { Knex } from 'knex';

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
const LEDGER_SPELLING = `(network LIKE 'eip155:%' AND tx_hash ~ '^0x[0-9a-fA-F]{64}$' AND payer ~ '^0x[0-9a-fA-F]{40}$')
  OR (network LIKE 'solana:%' AND tx_hash ~ '^${BASE58}{64,88}$' AND payer ~ '^${BASE58}{32,44}$')`;
const PAY_TO_SPELLING = `address ~ '^0x[0-9a-f]{40}$' OR address ~ '^${BASE58}{32,44}$'`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE ledger_entries ALTER COLUMN tx_hash TYPE varchar(88), ALTER COLUMN payer TYPE varchar(44)',
  );
  await knex.raw('ALTER TABLE sellers_pay_to ALTER COLUMN address TYPE varchar(44)');
  await knex.raw(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_spelling CHECK (${LEDGER_SPELLING})`);
  await knex.raw(`ALTER TABLE sellers_pay_to ADD CONSTRAINT sellers_pay_to_spelling CHECK (${PAY_TO_SPELLING})`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sellers_pay_to DROP CONSTRAINT sellers_pay_to_spelling');
  await knex.raw('ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_spelling');
  await knex.raw('ALTER TABLE sellers_pay_to ALTER COLUMN address TYPE char(42)');
  await knex.raw('ALTER TABLE ledger_entries ALTER COLUMN tx_hash TYPE char(66), ALTER COLUMN payer TYPE char(42)');
}

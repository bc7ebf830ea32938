/**
 * Seller ledger rows and proven pay-to addresses may be Solana's (docs/seller-middleware.md, "Solana"): a
 * Solana transaction signature is base58 of 64 bytes (up to 88 characters) and an address base58 of 32 bytes
 * (up to 44), where the EVM spellings are 66 and 42 characters. The fixed-width columns become `varchar` of
 * the longer length:
 *   - ledger_entries.tx_hash char(66) → varchar(88), ledger_entries.payer char(42) → varchar(44);
 *   - sellers_pay_to.address char(42) → varchar(44).
 * Casting from char drops its trailing pad spaces, so existing values read the same (callers trim them
 * anyway). Base58 is case-sensitive: Solana values are stored as given, EVM ones as before (lower-case).
 * The indexes on these columns (UNIQUE (seller_id, tx_hash), the verified-transfer index, the pay-to primary
 * key) are rebuilt by PostgreSQL with the new type.
 *
 * Down: back to the fixed widths; refused by PostgreSQL ("value too long") while a Solana value is stored, so
 * no row is cut short.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'ALTER TABLE ledger_entries ALTER COLUMN tx_hash TYPE varchar(88), ALTER COLUMN payer TYPE varchar(44)',
  );
  await knex.raw('ALTER TABLE sellers_pay_to ALTER COLUMN address TYPE varchar(44)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sellers_pay_to ALTER COLUMN address TYPE char(42)');
  await knex.raw('ALTER TABLE ledger_entries ALTER COLUMN tx_hash TYPE char(66), ALTER COLUMN payer TYPE char(42)');
}

/**
 * A reported settlement may be a Solana payment's (docs/api.md, the settlement route): its transaction is named
 * by its signature, base58 of 64 bytes (64 to 88 characters), where an EVM transaction hash is 0x + 64 hex (66).
 * authorizations.settlement_tx varchar(66) → varchar(88) (widening a varchar rewrites nothing), with a CHECK of
 * its spelling per the row's network family, as migration 20261129130000 does for the seller ledger: an
 * `eip155:` row a lower-case 0x hash (as Treasury has always stored it), a `solana:` row base58, case kept.
 * The CHECK is added NOT VALID and then validated, so the table is not locked against writes while existing
 * rows are read. The unique index on (network, settlement_tx) is rebuilt by PostgreSQL with the new type.
 *
 * Down: back to varchar(66); refused by PostgreSQL ("value too long") while a Solana settlement is stored, so
 * none is cut short.
 */
import type { Knex } from 'knex';

const SPELLING = `settlement_tx IS NULL
  OR (network LIKE 'eip155:%' AND settlement_tx ~ '^0x[0-9a-f]{64}$')
  OR (network LIKE 'solana:%' AND settlement_tx ~ '^[1-9A-HJ-NP-Za-km-z]{64,88}$')`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE authorizations ALTER COLUMN settlement_tx TYPE varchar(88)');
  await knex.raw(
    `ALTER TABLE authorizations ADD CONSTRAINT authorizations_settlement_tx_spelling CHECK (${SPELLING}) NOT VALID`,
  );
  await knex.raw('ALTER TABLE authorizations VALIDATE CONSTRAINT authorizations_settlement_tx_spelling');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE authorizations DROP CONSTRAINT authorizations_settlement_tx_spelling');
  await knex.raw('ALTER TABLE authorizations ALTER COLUMN settlement_tx TYPE varchar(66)');
}

/**
 * The Idempotency-Key uniqueness of authorizations (one key per wallet) as a partial unique index over the
 * rows that have a key. Payments without an Idempotency-Key — most of them — then add no entry to it (a
 * btree indexes NULLs too), one index insertion fewer per payment. Uniqueness is unchanged (NULLs never
 * conflicted), the name is unchanged (the pay path recognises a concurrent first use of a key by it), and
 * lookups by (wallet_id, idempotency_key = value) use it (equality implies NOT NULL). Both steps run in the
 * migration's transaction, so uniqueness is never unenforced; building the index holds writes to
 * authorizations for its duration: on a large table, run it in a quiet moment.
 */
import type { Knex } from 'knex';

const NAME = 'authorizations_wallet_id_idempotency_key_unique';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE authorizations DROP CONSTRAINT ${NAME}`);
  await knex.raw(
    `CREATE UNIQUE INDEX ${NAME} ON authorizations (wallet_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX ${NAME}`);
  await knex.raw(`ALTER TABLE authorizations ADD CONSTRAINT ${NAME} UNIQUE (wallet_id, idempotency_key)`);
}

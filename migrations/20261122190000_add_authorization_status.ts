/**
 * Reserve, then sign: an authorization row is written (and its spend counted) under the wallet lock before
 * the signer is asked, and the signature is recorded by a second, lock-free statement before it is
 * released. `status`: reserved (spend counted, not yet signed) → signed, or → released (the signer failed;
 * the spend was given back). A reserved row keeps its EIP-3009 nonce, so a retry signs the same message.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('authorizations', (t) => {
    t.string('status', 16).notNullable().defaultTo('signed');
    t.timestamp('signed_at', { useTz: true });
  });
  await knex.raw('ALTER TABLE authorizations ALTER COLUMN signature DROP NOT NULL');
  await knex.raw(
    `ALTER TABLE authorizations ADD CONSTRAINT authorizations_status_check CHECK (status IN ('reserved', 'signed', 'released'))`,
  );
  await knex.raw(
    `ALTER TABLE authorizations ADD CONSTRAINT authorizations_signed_has_signature CHECK (status <> 'signed' OR signature IS NOT NULL)`,
  );
  await knex.raw('UPDATE authorizations SET signed_at = created_at WHERE signed_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM authorizations WHERE signature IS NULL`);
  await knex.raw('ALTER TABLE authorizations DROP CONSTRAINT authorizations_signed_has_signature');
  await knex.raw('ALTER TABLE authorizations DROP CONSTRAINT authorizations_status_check');
  await knex.raw('ALTER TABLE authorizations ALTER COLUMN signature SET NOT NULL');
  await knex.schema.alterTable('authorizations', (t) => {
    t.dropColumn('signed_at');
    t.dropColumn('status');
  });
}

/**
 * x402 `payment-identifier` ids kept by the platform for sellers (docs/seller-middleware.md#payment-identifier,
 * docs/gate.md#payment-identifier): one row per (seller, route, id), first `pending` (a paid request with the
 * id is in flight; `fingerprint` binds it to that request and payment), then `done` with the answer a retry
 * gets. `expires_at` ends either state: a pending claim after its TTL, an answer after the retention window;
 * an expired row is taken over by the next claim and swept in small batches.
 * Every column is bounded here too: the id 16–128 of [A-Za-z0-9_-], the route at most 2048 characters, the
 * fingerprint 64 hex digits, the answer at most 400,000 bytes of JSON (a 256 KiB body in base64 and headers).
 *
 * Down: drops the table (stored answers are a cache of answers already given).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('seller_payment_ids', (t) => {
    t.string('seller_id', 40).notNullable().references('id').inTable('sellers').onDelete('CASCADE');
    t.string('route', 2048).notNullable();
    t.string('payment_id', 128).notNullable();
    t.specificType('fingerprint', 'char(64)').notNullable();
    t.string('state', 8).notNullable();
    t.jsonb('answer').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['seller_id', 'route', 'payment_id']);
    t.index(['seller_id', 'expires_at']);
  });
  await knex.raw(`ALTER TABLE seller_payment_ids
    ADD CONSTRAINT seller_payment_ids_id CHECK (payment_id ~ '^[A-Za-z0-9_-]{16,128}$'),
    ADD CONSTRAINT seller_payment_ids_fingerprint CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT seller_payment_ids_route CHECK (length(route) BETWEEN 1 AND 2048),
    ADD CONSTRAINT seller_payment_ids_state CHECK (
      (state = 'pending' AND answer IS NULL) OR (state = 'done' AND answer IS NOT NULL)),
    ADD CONSTRAINT seller_payment_ids_answer_size CHECK (answer IS NULL OR octet_length(answer::text) <= 400000)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('seller_payment_ids');
}

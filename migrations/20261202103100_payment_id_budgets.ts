/**
 * Per-seller budgets of the x402 `payment-identifier` store (table seller_payment_ids, migration 20261130100000;
 * src/api/sellers/store/pg-payment-id-store.ts): a seller may hold at most so many rows and so many bytes of
 * stored answers (TREASURY_MAX_PAYMENT_IDS_PER_SELLER, TREASURY_MAX_PAYMENT_ID_BYTES_PER_SELLER), checked on a
 * running total rather than a count or a sum over the seller's rows on every request.
 * - `seller_payment_ids.answer_bytes`: the stored answer's size (octet_length of its JSON text, what the
 *   answer_size check bounds), 0 while pending; computed by PostgreSQL on every write (a stored generated column),
 *   so a total never reads an answer back.
 * - `seller_payment_id_totals` (seller_id, id_rows, answer_bytes): each seller's rows and answer bytes, kept by
 *   statement triggers on every INSERT, UPDATE and DELETE of seller_payment_ids (a claim, a take-over of an
 *   expired row, a completion, a release, a sweep, a seller's rows deleted with it), in the same transaction.
 *   Expired rows count until they are swept: the store sweeps a seller's expired rows when it reaches a budget,
 *   and the API sweeps every seller's expired rows in the background.
 * - `seller_payment_ids_expiry` (expires_at): the background sweep finds expired rows of any seller on it.
 * The totals are built from the rows already stored, with the table locked against writes meanwhile.
 *
 * Defends: one seller filling the shared database with ids and answers (the budgets are enforced on these totals);
 * a total drifting from its rows (only the triggers write it, for every statement that changes a row).
 * Down drops the totals, the triggers, the index and the column.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE seller_payment_ids IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw(`ALTER TABLE seller_payment_ids
    ADD COLUMN answer_bytes integer GENERATED ALWAYS AS (COALESCE(octet_length(answer::text), 0)) STORED`);
  await knex.raw(`CREATE TABLE seller_payment_id_totals (
    seller_id varchar(40) PRIMARY KEY REFERENCES sellers(id) ON DELETE CASCADE,
    id_rows integer NOT NULL DEFAULT 0,
    answer_bytes bigint NOT NULL DEFAULT 0
  )`);
  await knex.raw(`
    CREATE FUNCTION seller_payment_ids_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO seller_payment_id_totals AS t (seller_id, id_rows, answer_bytes)
        SELECT seller_id, count(*), sum(answer_bytes) FROM added_ids GROUP BY seller_id ORDER BY seller_id
        ON CONFLICT (seller_id) DO UPDATE
          SET id_rows = t.id_rows + EXCLUDED.id_rows, answer_bytes = t.answer_bytes + EXCLUDED.answer_bytes;
      RETURN NULL;
    END $$;
    CREATE FUNCTION seller_payment_ids_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE seller_payment_id_totals t SET id_rows = t.id_rows - d.n, answer_bytes = t.answer_bytes - d.bytes
        FROM (SELECT seller_id, count(*) AS n, sum(answer_bytes) AS bytes FROM removed_ids GROUP BY seller_id) d
       WHERE t.seller_id = d.seller_id;
      RETURN NULL;
    END $$;
    CREATE FUNCTION seller_payment_ids_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE seller_payment_id_totals t SET id_rows = t.id_rows + d.n, answer_bytes = t.answer_bytes + d.bytes
        FROM (SELECT seller_id, sum(n) AS n, sum(bytes) AS bytes FROM (
                SELECT seller_id, 1 AS n, answer_bytes AS bytes FROM changed_to
                UNION ALL SELECT seller_id, -1, -answer_bytes FROM changed_from) c
               GROUP BY seller_id) d
       WHERE t.seller_id = d.seller_id AND (d.n <> 0 OR d.bytes <> 0);
      RETURN NULL;
    END $$;
    CREATE TRIGGER seller_payment_ids_totals_insert AFTER INSERT ON seller_payment_ids
      REFERENCING NEW TABLE AS added_ids FOR EACH STATEMENT EXECUTE FUNCTION seller_payment_ids_inserted();
    CREATE TRIGGER seller_payment_ids_totals_delete AFTER DELETE ON seller_payment_ids
      REFERENCING OLD TABLE AS removed_ids FOR EACH STATEMENT EXECUTE FUNCTION seller_payment_ids_deleted();
    CREATE TRIGGER seller_payment_ids_totals_update AFTER UPDATE ON seller_payment_ids
      REFERENCING OLD TABLE AS changed_from NEW TABLE AS changed_to
      FOR EACH STATEMENT EXECUTE FUNCTION seller_payment_ids_updated();
  `);
  await knex.raw(`INSERT INTO seller_payment_id_totals (seller_id, id_rows, answer_bytes)
    SELECT seller_id, count(*), sum(answer_bytes) FROM seller_payment_ids GROUP BY seller_id`);
  await knex.raw('CREATE INDEX seller_payment_ids_expiry ON seller_payment_ids (expires_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS seller_payment_ids_expiry');
  await knex.raw(`
    DROP TRIGGER seller_payment_ids_totals_insert ON seller_payment_ids;
    DROP TRIGGER seller_payment_ids_totals_delete ON seller_payment_ids;
    DROP TRIGGER seller_payment_ids_totals_update ON seller_payment_ids;
    DROP FUNCTION seller_payment_ids_inserted();
    DROP FUNCTION seller_payment_ids_deleted();
    DROP FUNCTION seller_payment_ids_updated();
  `);
  await knex.raw('DROP TABLE seller_payment_id_totals');
  await knex.raw('ALTER TABLE seller_payment_ids DROP COLUMN answer_bytes');
}

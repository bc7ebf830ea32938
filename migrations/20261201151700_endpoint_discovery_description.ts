/**
 * The description an endpoint's OpenAPI operation declares (`endpoints.discovery->>'description'`, at most 512
 * characters as the refresh writes it) in a column of its own, `endpoints.discovery_description`, so that the
 * public catalogue's search (src/api/discovery/discovery-store.ts) matches it without reading the whole
 * `discovery` value: that JSON also holds the operation's input and output schemas (up to 64 KiB, stored out of
 * line), and reading one key of it made PostgreSQL fetch and decompress all of it for every listed endpoint at
 * every search.
 *
 * A stored generated column (`->>` is immutable): PostgreSQL computes it on every insert and update, whoever
 * writes `discovery`, and refuses a write to it; null where `discovery` is null or declares no description. On
 * existing rows it is computed as the column is added (the table is rewritten under its lock, once).
 *
 * Down drops the column.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `ALTER TABLE endpoints ADD COLUMN discovery_description text
       GENERATED ALWAYS AS (discovery ->> 'description') STORED`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE endpoints DROP COLUMN discovery_description');
}

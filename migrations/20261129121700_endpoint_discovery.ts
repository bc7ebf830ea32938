/**
 * What an endpoint's OpenAPI operation declares for buyers, kept for the public catalogue (GET /discovery/*,
 * docs/api.md#discovery): `endpoints.discovery`, a JSON object with the operation's description and the JSON
 * Schemas of its input (query parameters or JSON body) and output (JSON answer), each present only when the
 * document declared it. Written by the OpenAPI refresh, null for endpoints added by hand and for those ingested
 * before this migration (the next refresh fills them). CHECK endpoints_discovery_bounded: at most 64 KiB of
 * JSON text and an object, whoever writes it.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE endpoints ADD COLUMN discovery jsonb');
  await knex.raw(
    `ALTER TABLE endpoints ADD CONSTRAINT endpoints_discovery_bounded
       CHECK (discovery IS NULL OR (jsonb_typeof(discovery) = 'object' AND octet_length(discovery::text) <= 65536))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE endpoints DROP CONSTRAINT endpoints_discovery_bounded');
  await knex.raw('ALTER TABLE endpoints DROP COLUMN discovery');
}

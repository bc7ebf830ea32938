/**
 * The sandbox's database: DATABASE_URL when set, else an embedded PostgreSQL under `<data dir>/pg` on loopback
 * (its stop recorded in the sandbox's parts); then the migrations, as their own step before any process that
 * uses the database starts (the API refuses to start while one is pending).
 * Does not: create or reset a database behind DATABASE_URL; it migrates whatever is there.
 */
import path from 'node:path';
import { createKnex, migrateLatest } from '../../src/api/db/knex-client.js';
import { dataDir, pgPort, say } from './sandbox-settings.js';
import type { SandboxParts } from './sandbox-parts.js';

/** Resolves with the database's connection string once it runs and is migrated. */
export async function startSandboxDatabase(parts: SandboxParts): Promise<string> {
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    say(`• starting embedded PostgreSQL on 127.0.0.1:${pgPort} (${path.join(dataDir, 'pg')})`);
    const { startEmbeddedPostgres } = await import('../../src/api/db/embedded-postgres.js');
    const pg = await startEmbeddedPostgres({ dir: path.join(dataDir, 'pg'), port: pgPort });
    parts.stopDatabase = () => pg.stop();
    databaseUrl = pg.connectionString;
  } else {
    say('• using DATABASE_URL');
  }

  const knex = createKnex(databaseUrl, 2, 'treasury-sandbox');
  try {
    const applied = await migrateLatest(knex);
    say(`• migrations: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}`);
  } finally {
    await knex.destroy();
  }
  return databaseUrl;
}

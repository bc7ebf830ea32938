/**
 * `npm run migrate` (latest) and `npm run migrate:status`. Uses DATABASE_URL, else the embedded
 * PostgreSQL under TREASURY_DATA_DIR (default ./.treasury).
 */
import { loadAppConfig } from '../config/app-config.js';
import { createKnex, listPendingMigrations, migrateLatest } from './knex-client.js';
import { resolveDatabase } from './resolve-database.js';

async function main(): Promise<void> {
  const command = process.argv[2] ?? 'latest';
  if (command !== 'latest' && command !== 'status') {
    process.stderr.write('usage: migrate-cli latest|status\n');
    process.exit(2);
  }
  const config = loadAppConfig();
  const db = await resolveDatabase(config);
  const knex = createKnex(db.connectionString, 2, 'treasury-migrate');
  try {
    if (command === 'latest') {
      const applied = await migrateLatest(knex);
      process.stdout.write(JSON.stringify({ applied, pending: await listPendingMigrations(knex) }) + '\n');
    } else {
      const pending = await listPendingMigrations(knex);
      process.stdout.write(JSON.stringify({ pending }) + '\n');
      process.exitCode = pending.length > 0 ? 3 : 0;
    }
  } finally {
    await knex.destroy();
    await db.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`migrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

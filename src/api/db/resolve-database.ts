/**
 * Picks the database: DATABASE_URL when set, else (outside production mode) the embedded PostgreSQL under <dataDir>/pg.
 */
import path from 'node:path';
import type { AppConfig } from '../config/app-config.js';

export interface ResolvedDatabase {
  connectionString: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function resolveDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'embeddedPgPort'> & Partial<Pick<AppConfig, 'production'>>,
): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { connectionString: config.databaseUrl, embedded: false, stop: async () => undefined };
  // Production mode never falls back to an ephemeral database (main.ts refuses earlier; migrate-cli lands here).
  if (config.production) throw new Error('DATABASE_URL is not set: production mode needs a PostgreSQL server');
  const { startEmbeddedPostgres } = await import('./embedded-postgres.js');
  const handle = await startEmbeddedPostgres({ dir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort });
  return { connectionString: handle.connectionString, embedded: true, stop: () => handle.stop() };
}

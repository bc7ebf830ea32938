/**
 * Picks the database: DATABASE_URL when set, else the embedded PostgreSQL under <dataDir>/pg.
 */
import path from 'node:path';
import type { AppConfig } from '../config/app-config.js';

export interface ResolvedDatabase {
  connectionString: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function resolveDatabase(
  config: Pick<AppConfig, 'databaseUrl' | 'dataDir' | 'embeddedPgPort'>,
): Promise<ResolvedDatabase> {
  if (config.databaseUrl) return { connectionString: config.databaseUrl, embedded: false, stop: async () => undefined };
  const { startEmbeddedPostgres } = await import('./embedded-postgres.js');
  const handle = await startEmbeddedPostgres({ dir: path.join(config.dataDir, 'pg'), port: config.embeddedPgPort });
  return { connectionString: handle.connectionString, embedded: true, stop: () => handle.stop() };
}

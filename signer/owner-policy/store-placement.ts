/**
 * Where the signer's store may be (docs/adr/0012-owner-signed-policies.md: its own database, under a role only the
 * signer holds), checked by ./pg-owner-policy-store.ts before it migrates: a database holding the API's tables (its
 * knex migrations table with its accounts or wallet keys) is refused, so the signer never migrates its tables beside
 * the API's, where the API's role could write them; a role that is a superuser is logged as a warning (it can reach
 * every database of the server, the API's too).
 *
 * Defends: the store put in the API's database by a wrong TREASURY_SIGNER_DATABASE_URL. Does not defend: the API's
 * role granted the signer's database, or the store on a server whose superuser the API holds (docs/deploy-hsm.md);
 * an API schema that is not yet migrated (an empty database is the signer's to take).
 */
import type pg from 'pg';
import { BaseError } from '../../base/base-error.js';
import type { StoreLog } from './store-generation.js';

export class StorePlacementError extends BaseError<'store_in_api_database', { database: string; role: string }> {
  override readonly name = 'StorePlacementError';
  constructor(database: string, role: string) {
    super('store_in_api_database', {
      message:
        `TREASURY_SIGNER_DATABASE_URL names database ${database}, which holds the API's tables: the signer's policy ` +
        `store must be a database of its own, under a role only the signer holds (docs/deploy-hsm.md)`,
      details: { database, role },
    });
  }
}

/** Refuses a database that holds the API's tables; warns of a superuser role. */
export async function checkStorePlacement(db: Pick<pg.Pool, 'query'>, log: StoreLog | undefined): Promise<void> {
  const { rows } = await db.query<{ api: boolean; superuser: boolean | null; database: string; role: string }>(
    `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = 'knex_migrations')
            AND EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE tablename IN ('treasury_accounts', 'wallet_keys')) AS api,
            (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) AS superuser,
            current_database() AS database, current_user AS role`,
  );
  const row = rows[0]!;
  if (row.api) throw new StorePlacementError(row.database, row.role);
  if (row.superuser)
    log?.warn(
      { event: 'store_role_superuser', database: row.database, role: row.role },
      "the signer's policy store is reached as a superuser: give the signer a role of its own (docs/deploy-hsm.md)",
    );
}

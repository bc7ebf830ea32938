/**
 * The embedded PostgreSQL default: a second start on a directory whose server belongs to a live process is
 * refused (never stopped under it), a server orphaned by a SIGKILLed parent is stopped and replaced, a
 * young table is analyzed within seconds, and Ctrl-C leaves a process's own shutdown to finish (the
 * package's exit hook acts only in a process without handlers).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../../src/api/db/embedded-postgres.js';
import { spawnDetached, type DetachedChild } from '../../support/detached-child.js';
import { isProcessAlive as isRunning } from '../../support/process-alive.js';
import { freePort } from '../../support/test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/**
 * Runs `script` (an ES module, inside the project's git-ignored .treasury/ so it resolves the project's
 * packages) in its own process group; resolves once it prints READY. `cleanup()` kills what is left of the
 * group and removes the script.
 */
async function spawnScript(
  name: string,
  script: string,
): Promise<{
  child: DetachedChild['child'];
  output: () => string;
  exited: Promise<number | null>;
  cleanup: () => void;
}> {
  fs.mkdirSync(path.join(ROOT, '.treasury'), { recursive: true });
  const file = path.join(ROOT, '.treasury', `${name}-${process.pid}.mts`);
  // Once the script's own lines have run it says READY, and an interval keeps it alive until it is signalled.
  fs.writeFileSync(file, `${script}\nconsole.log('READY');\nsetInterval(() => {}, 1000);\n`);
  const { child, output, exited } = spawnDetached(process.execPath, ['--import', 'tsx', file], { cwd: ROOT });
  const cleanup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    fs.rmSync(file, { force: true });
  };
  const deadline = Date.now() + 60_000;
  while (!output().includes('READY')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      cleanup();
      throw new Error(`${name} did not get ready:\n${output()}`);
    }
    await sleep(100);
  }
  return { child, output, exited, cleanup };
}

/** A script's first lines: import startEmbeddedPostgres, and `start` the server on `dir` at `port`. */
function startingPostgres(dir: string, port: number, start: string): string {
  const module = JSON.stringify(path.join(ROOT, 'src/api/db/embedded-postgres.ts'));
  return `import { startEmbeddedPostgres } from ${module};\n${start}startEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, port: ${port} });`;
}

/** A new temporary directory for an embedded PostgreSQL, readable by the server's own user (0755). */
function epgDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-epg-'));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/**
 * Runs `script` (after the lines that start a server on a fresh epgDir() at a free port, `const h =` naming
 * it) with spawnScript, then `check` on it; kills what is left of it and removes the directory afterwards.
 */
async function withPostgresScript(
  name: string,
  script: string,
  check: (run: Awaited<ReturnType<typeof spawnScript>>, dir: string) => Promise<void>,
): Promise<void> {
  const dir = epgDir();
  const run = await spawnScript(name, `${startingPostgres(dir, await freePort(), 'const h = await ')}\n${script}`);
  try {
    await check(run, dir);
  } finally {
    run.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('embedded PostgreSQL', function () {
  this.timeout(120_000);

  it('refuses to take over a data directory whose server belongs to a live process', async () => {
    const dir = epgDir();
    const first = await startEmbeddedPostgres({ dir, port: await freePort() });
    try {
      await assert.rejects(
        startEmbeddedPostgres({ dir, port: await freePort() }),
        /another process is running the PostgreSQL server/,
      );
      const client = new pg.Client(first.connectionString);
      await client.connect();
      assert.equal((await client.query('SELECT 1 AS one')).rows[0].one, 1, 'the first server is untouched');
      await client.end();
    } finally {
      await first.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('analyzes a young table within seconds, so cached plans are not left on an empty table', async () => {
    const dir = epgDir();
    const server = await startEmbeddedPostgres({ dir, port: await freePort() });
    const client = new pg.Client(server.connectionString);
    try {
      await client.connect();
      await client.query('CREATE TABLE young (id integer PRIMARY KEY, v text)');
      await client.query("INSERT INTO young SELECT g, 'x' FROM generate_series(1, 500) g");
      const analyzed = async () =>
        (await client.query("SELECT last_autoanalyze FROM pg_stat_user_tables WHERE relname = 'young'")).rows[0]
          ?.last_autoanalyze;
      // With PostgreSQL's default (autovacuum every minute) this waits past the deadline; at 10 s it took 23 s in
      // a run beside two CPU hogs (November 30), so the deadline sits between the two rather than near the first.
      const deadline = Date.now() + 50_000;
      while (!(await analyzed()) && Date.now() < deadline) await sleep(500);
      assert.ok(await analyzed(), 'autovacuum analyzed the new table');
      assert.equal(
        Number((await client.query("SELECT reltuples FROM pg_class WHERE relname = 'young'")).rows[0].reltuples),
        500,
      );
    } finally {
      await client.end().catch(() => undefined);
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('recovers from a server orphaned by a SIGKILLed parent, keeping committed data', async () => {
    const dir = epgDir();
    const port = await freePort();
    const run = await spawnScript(
      'epg-parent',
      `
      import pg from 'pg';
      ${startingPostgres(dir, port, 'const h = await ')}
      const c = new pg.Client(h.connectionString); await c.connect();
      await c.query('CREATE TABLE survivor (v int)'); await c.query('INSERT INTO survivor VALUES (42)'); await c.end();
    `,
    );
    run.child.kill('SIGKILL'); // the parent only: its server is left orphaned
    await sleep(500);
    const pid = Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
    assert.doesNotThrow(() => process.kill(pid, 0), 'the orphaned server is still running');
    const again = await startEmbeddedPostgres({ dir, port });
    try {
      const client = new pg.Client(again.connectionString);
      await client.connect();
      assert.equal((await client.query('SELECT v FROM survivor')).rows[0].v, 42);
      await client.end();
    } finally {
      await again.stop();
      run.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Ctrl-C to the process group lets a process with its own handler finish its shutdown', async () => {
    // Like the sandbox: its SIGINT handler stops other parts first (here: 3 s), then PostgreSQL, then says so.
    await withPostgresScript(
      'epg-owner',
      `
      process.on('SIGINT', async () => {
        await new Promise((r) => setTimeout(r, 3000));
        await h.stop();
        console.log('OWN SHUTDOWN DONE');
        process.exit(0);
      });
    `,
      async (run, dir) => {
        process.kill(-run.child.pid!, 'SIGINT');
        const code = await run.exited;
        assert.equal(code, 0, run.output());
        assert.match(run.output(), /OWN SHUTDOWN DONE/);
        assert.ok(!fs.existsSync(path.join(dir, 'data', 'postmaster.pid')), 'the server stopped');
      },
    );
  });

  it('Ctrl-C to a process without handlers still stops its server', async () => {
    await withPostgresScript('epg-plain', '', async (run, dir) => {
      const pid = Number(fs.readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
      run.child.kill('SIGINT'); // the process only: stopping the server is the hook's work
      assert.equal(await run.exited, 130, run.output());
      const deadline = Date.now() + 10_000;
      while (isRunning(pid) && Date.now() < deadline) await sleep(100);
      assert.ok(!isRunning(pid), 'the server stopped with its process');
    });
  });
});

/**
 * The bench's steady floor with real processes and a real PostgreSQL: each request crosses the front, the
 * echo process and one group-committed insert, and answers 200 only once its row is committed; stopping it
 * leaves no process or socket directory behind.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { KeepAliveLoadClient } from '../../../bench/support/keep-alive-load-client.js';
import { startSteadyFloor } from '../../../bench/support/steady-floor.js';
import { freePort, useTestDatabase, type TestDatabase } from '../../support/test-database.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const floorDirs = () => fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith('treasury-bench-floor-'));
/** Running, not exited (an exited process not yet reaped by its new parent is a zombie, state Z). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('bench steady floor', () => {
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  it('commits one row per request before answering 200, with and without busy work, and stops cleanly', async () => {
    const dirsBefore = floorDirs().length;
    for (const workMicros of [undefined, { front: 300, echo: 300 }]) {
      const floor = await startSteadyFloor({
        connectionString: db.connectionString,
        port: await freePort(),
        cwd: ROOT,
        workMicros,
      });
      const client = new KeepAliveLoadClient({ host: '127.0.0.1', port: floor.port, connections: 4 });
      try {
        const started = performance.now();
        const statuses = await Promise.all(
          Array.from({ length: 40 }, () =>
            client.request('POST', '/pay', { 'content-type': 'application/json' }, Buffer.from('{"a":1}')),
          ),
        );
        const elapsedMs = performance.now() - started;
        assert.deepEqual(new Set(statuses), new Set([200]));
        // With 300 µs in each of two serial processes, 40 requests take at least 40 × 300 µs in each.
        if (workMicros) assert.ok(elapsedMs >= 12, `40 requests with busy work took ${elapsedMs} ms`);
        const c = new pg.Client(db.connectionString);
        await c.connect();
        const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM bench_floor');
        await c.end();
        assert.equal(Number(rows[0]!.n), workMicros ? 80 : 40);
      } finally {
        client.close();
        floor.stop();
      }
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(alive(floor.pid), false, 'the front has exited');
      assert.equal(alive(floor.echoPid), false, 'the echo process has exited');
    }
    assert.equal(floorDirs().length, dirsBefore);
  });
});

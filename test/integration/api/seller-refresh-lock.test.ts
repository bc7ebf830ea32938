/**
 * A seller's endpoint set lock is tried, never waited for (src/api/sellers/store/pg-endpoint-store.ts): while
 * another change of the seller's endpoints holds it (here a separate connection holds the same advisory lock,
 * as a refresh inside its transaction would), thirty OpenAPI refreshes sent at once are each answered 409
 * `seller_refresh_in_progress` (Retry-After) at once, holding no pooled connection — and so is an endpoint added
 * by hand (POST /v1/sellers/{id}/endpoints) — while another tenant's request is answered meanwhile; once the
 * lock is free, both go through. State-based: the pool's and PostgreSQL's lock waiters are read, never times.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import pg from 'pg';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';

type Answer = { status: number; body: any; headers: Headers };

describe('seller endpoint set lock: tried, never waited for (HTTP, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let server: http.Server;
  let url: string;
  const doc = {
    openapi: '3.1.0',
    paths: { '/search': { post: { operationId: 'search', summary: 'Search', 'x-price-usd': '0.05' } } },
  };

  before(async () => {
    server = http.createServer(openApiDocHandler(() => doc));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/openapi.json`;
  });
  after(() => void server?.close());

  function assertInProgress(answer: Answer | undefined, sellerId: string): void {
    assert.ok(answer, 'answered');
    assert.equal(answer.status, 409, JSON.stringify(answer.body));
    assert.equal(answer.body.error_code, 'seller_refresh_in_progress');
    assert.equal(answer.body.seller_id, sellerId);
    assert.equal(answer.body.recovery?.kind, 'retry_later');
    assert.equal(answer.headers.get('retry-after'), '5');
  }

  it("thirty refreshes sent while the seller's endpoint set is locked are refused at once, holding no pooled connection; another tenant is answered meanwhile", async () => {
    const { session } = await signInWithNewKey(t);
    const created = await t.request('POST', '/v1/sellers', {
      token: session,
      body: { name: 'Busy Co', openapi_url: url },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { seller_id: sellerId, pat } = created.body as { seller_id: string; pat: string };
    const pool = (t.db.knex.client as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;

    // The seller's endpoint set lock, held on a connection of its own (which also reads the lock waits: a pool
    // full of waiters could not answer).
    const holder = new pg.Client({ connectionString: t.db.connectionString });
    await holder.connect();
    const lock = [`seller:${sellerId}`];
    const lockWaiters = async () =>
      Number(
        (
          await holder.query(
            `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database =
               (SELECT oid FROM pg_database WHERE datname = current_database())`,
          )
        ).rows[0].n,
      );
    await holder.query('SELECT pg_advisory_lock(hashtextextended($1, 19))', lock);
    let released = false;
    const release = async () => {
      if (!released) await holder.query('SELECT pg_advisory_unlock(hashtextextended($1, 19))', lock);
      released = true;
    };
    try {
      const outcomes: Array<Answer | undefined> = Array.from({ length: 30 });
      const refreshes = outcomes.map((_, i) =>
        t
          .request('POST', `/v1/sellers/${sellerId}/refresh`, { token: pat })
          .then((answer) => void (outcomes[i] = answer)),
      );
      // Until all thirty answered, or some wait on the lock in PostgreSQL and the rest for a pooled connection.
      let waiting = 0;
      for (let i = 0; i < 1000; i++) {
        const onLock = await lockWaiters();
        waiting = onLock + pool.numPendingAcquires();
        const answered = outcomes.filter(Boolean).length;
        if (answered === 30 || (onLock > 0 && answered + waiting >= 30)) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(
        { answered: outcomes.filter(Boolean).length, waiting },
        { answered: 30, waiting: 0 },
        'every refresh answered while the lock is held, none waiting for it',
      );
      assert.ok(pool.numUsed() <= 2, `pooled connections in use: ${pool.numUsed()}`);
      for (const answer of outcomes) assertInProgress(answer, sellerId);

      // An endpoint added by hand takes the same lock: refused the same way.
      const manual = await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
        token: pat,
        body: { path: '/manual', price: '1' },
      });
      assertInProgress(manual, sellerId);

      // Another tenant's authenticated request is answered while the lock is still held.
      const other = await signInWithNewKey(t);
      const listed = await t.request('GET', '/v1/sellers', { token: other.session });
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      assert.equal(await lockWaiters(), 0);
      await Promise.all(refreshes);
    } finally {
      await release();
      await holder.end();
    }

    // The lock free, the refresh and the endpoint go through; nothing the refused ones did remains.
    const refreshed = await t.request('POST', `/v1/sellers/${sellerId}/refresh`, { token: pat });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.deepEqual([refreshed.body.added, refreshed.body.changed, refreshed.body.unchanged], [[], [], 1]);
    const manual = await t.request('POST', `/v1/sellers/${sellerId}/endpoints`, {
      token: pat,
      body: { path: '/manual', price: '1' },
    });
    assert.equal(manual.status, 201, JSON.stringify(manual.body));
  });
});

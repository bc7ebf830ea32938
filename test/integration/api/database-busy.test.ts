/**
 * A statement that waits too long for a lock or runs too long is cancelled by PostgreSQL under the API's
 * session limits (TREASURY_DB_LOCK_TIMEOUT_MS, TREASURY_DB_STATEMENT_TIMEOUT_MS), and the request answers 503
 * `database_busy` with Retry-After — promptly, instead of waiting as long as someone else holds the lock —
 * having written nothing and released no signature. Once the lock is gone the same request succeeds.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { createKnex } from '../../../src/api/db/knex-client.js';
import { walletLockKey } from '../../../src/api/db/wallet-transaction.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';

describe('PostgreSQL too slow to answer: session limits (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let t: TestTreasury;
  let other: pg.Client;

  before(async () => {
    db = await createTestDatabase();
    // The API's pool with short limits, as TREASURY_DB_LOCK_TIMEOUT_MS / _STATEMENT_TIMEOUT_MS would give it.
    const knex = createKnex(db.connectionString, 10, 'treasury-api', undefined, {
      lockTimeoutMs: 300,
      statementTimeoutMs: 1_000,
      idleInTransactionTimeoutMs: 60_000,
    });
    t = await startTestTreasury({ database: { ...db, knex } });
    other = new pg.Client(db.connectionString);
    await other.connect();
  });
  after(async () => {
    await other?.end();
    await t?.stop();
    await t?.db.knex.destroy();
    await db?.drop();
  });

  const counts = async (walletId: string) => ({
    authorizations: (await db.knex('authorizations').where({ wallet_id: walletId })).length,
    audit: (await db.knex('audit_events').where({ chain_key: walletId })).length,
    spent: String(
      (await db.knex('wallet_spend_totals').where({ wallet_id: walletId, window_kind: 'day' }).first())?.spent_micro ??
        '0',
    ),
  });

  /** A new wallet with a 1 USD daily cap, and its payment of 0.1 USD with `token`. */
  async function cappedWallet(token: string) {
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } }))
      .body as { id: string };
    const pay = () =>
      t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount: '100000' }) },
      });
    return { wallet, pay };
  }

  it('a wallet locked by another session: the payment answers 503 database_busy within the lock time-out, writes nothing, and succeeds once the lock is gone', async () => {
    const token = await mintAgentKey(t, 'busy');
    const { wallet, pay } = await cappedWallet(token);
    assert.equal((await pay()).status, 200);
    const before = await counts(wallet.id);

    const { pay: paySibling } = await cappedWallet(token);
    assert.equal((await paySibling()).status, 200);

    // Someone holds the wallet's lock — a manual session, a stuck job — for longer than a client waits.
    await other.query('SELECT pg_advisory_lock($1)', [walletLockKey(wallet.id).toString()]);
    try {
      // Another wallet pays at the same moment: its write queues behind the locked one's shared statement, and
      // must not wait for as long as the lock is held.
      const [res, ok] = await Promise.all([pay(), new Promise((r) => setTimeout(r, 20)).then(paySibling)]);
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'database_busy');
      assert.equal(res.headers.get('retry-after'), '1');
      assert.equal(res.body.signature, undefined);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      // Answered while the lock was still held (order, not a wall-clock budget): it is released only below.
      const held = await other.query(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = pg_backend_pid()",
      );
      assert.equal(held.rows[0].n, 1, 'answered while the lock was held, not when it came free');
      assert.deepEqual(await counts(wallet.id), before, 'nothing written');
    } finally {
      await other.query('SELECT pg_advisory_unlock_all()');
    }
    const metrics = String((await t.request('GET', '/metrics')).body);
    assert.match(metrics, /treasury_errors_total\{error_code="database_busy"\} [1-9]/);

    const after = await pay();
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.equal((await counts(wallet.id)).spent, '200000');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
  });

  it('a table locked by another session (a migration, say): reads answer 503 database_busy too, then serve again', async () => {
    const token = await mintAgentKey(t, 'busy-table');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: {} })).body as { id: string };
    await other.query('BEGIN');
    try {
      await other.query('LOCK TABLE wallets IN ACCESS EXCLUSIVE MODE');
      const res = await t.request('GET', `/v1/wallets/${wallet.id}`, { token });
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'database_busy');
    } finally {
      await other.query('ROLLBACK');
    }
    assert.equal((await t.request('GET', `/v1/wallets/${wallet.id}`, { token })).status, 200);
  });
});

/**
 * PostgreSQL out of reach: while the database refuses connections (a restart, a failover, an operator
 * closing it), requests answer 503 `database_unavailable` with Retry-After — not 500 — and write nothing;
 * once it accepts connections again the same requests succeed on new connections. The buyer SDK rides out
 * a short outage by itself: it retries a 503 after its Retry-After (a payment only with its Idempotency-Key).
 * A payment whose signed write is cut off is decided again and answered once; one whose signature record
 * fails (the locked path reserves first) answers 503 and gives its reservation back.
 */
import assert from 'node:assert/strict';
import { mintAgentKey, type TestTreasury } from '../../support/api-harness.js';
import { useGatedTestTreasury } from '../../support/database-outage.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { TreasuryClient } from '../../../src/sdk/index.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { daySpentMicro } from '../../support/spend-totals.js';

describe('PostgreSQL out of reach (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const { t, gate: admin } = useGatedTestTreasury({ extraEnv: { TREASURY_AUTH_CACHE_MS: '0' } });

  /**
   * Ends the sessions on the test database that wait on a lock in a statement starting `statementStart`, every
   * 10 ms (1000 tries at the most), until `count` have been ended; returns how many were.
   */
  async function endLockWaiters(statementStart: string, count: number): Promise<number> {
    let cut = 0;
    for (let i = 0; i < 1000 && cut < count; i++) {
      const r = await t.db.knex.raw(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ?",
        [`${statementStart}%`],
      );
      cut += r.rows[0].n;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return cut;
  }

  it('answers 503 database_unavailable with Retry-After while the database refuses connections, writes nothing, and serves again after', async () => {
    const token = await mintAgentKey(t, 'outage');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body;
    const pay = () =>
      t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount: '100000' }) },
      });

    // Close the database to new connections and end every session on it (the pool's and the writers').
    await admin.refuse();

    for (const res of [await t.request('GET', '/v1/wallets', { token }), await pay()]) {
      assert.equal(res.status, 503, JSON.stringify(res.body));
      assert.equal(res.body.error_code, 'database_unavailable');
      assert.equal(res.headers.get('retry-after'), '1');
      assert.match(res.body.request_id, /\S/);
      assert.doesNotMatch(
        JSON.stringify(res.body),
        /accepting connections|terminat|ECONN/i,
        'no database detail leaks',
      );
    }
    const ready = await t.request('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.database, false, 'readiness names the database');
    const metrics = await t.request('GET', '/metrics');
    assert.match(String(metrics.body), /treasury_errors_total\{error_code="database_unavailable"\} [2-9]/);

    await admin.allow();
    assert.equal((await t.request('GET', '/readyz')).body.database, true);
    const paid = await pay();
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    const rows = await t.db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.equal(rows.length, 1, 'the refused payment wrote nothing; the one after wrote its row');
    assert.equal(await daySpentMicro(t.db.knex, wallet.id), '100000');
  });

  it('the buyer SDK retries through a short outage: a read, and a payment with its Idempotency-Key, once the database is back', async () => {
    const token = await mintAgentKey(t, 'outage-sdk');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body;
    const client = new TreasuryClient({ apiUrl: t.baseUrl, token });
    await admin.refuse();
    const started = Date.now();
    const read = client.getWallet(wallet.id);
    const paid = client.pay(wallet.id, {
      paymentRequirements: paymentRequirements({ amount: '200000' }),
      idempotencyKey: 'outage-1',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await admin.allow();
    assert.equal((await read).id, wallet.id);
    const payment = await paid;
    assert.ok(Date.now() - started >= 1000, 'the first answers were 503 with Retry-After: 1');
    const rows = await t.db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.equal(rows.length, 1, 'one payment');
    assert.equal(rows[0].signature, payment.signature);
  });

  it('a payment whose signed write is cut off while it runs is decided and signed again: one row, counted once', async () => {
    const token = await mintAgentKey(t, 'outage-write');
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '1' } } })).body;
    // Block the table so that the payment's write (its decision and its signature in one statement) waits, and
    // end that session under it; the table is let go then.
    const holder = await t.db.knex.transaction();
    let cut = 0;
    let paying: ReturnType<TestTreasury['request']> | undefined;
    try {
      await holder.raw('LOCK TABLE authorizations IN SHARE MODE');
      paying = t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ amount: '300000' }) },
      });
      cut = await endLockWaiters('WITH l AS', 1);
    } finally {
      await holder.commit();
    }
    assert.equal(cut, 1, 'the signed write was waiting, and its session was ended');
    const res = await paying!;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const rows = await t.db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.equal(rows.length, 1, 'the cut write wrote nothing; its signature never left');
    assert.equal(rows[0].status, 'signed');
    assert.equal(rows[0].signature, res.body.signature);
    assert.equal(await daySpentMicro(t.db.knex, wallet.id), '300000', 'counted once');
  });

  it('a payment whose signature cannot be recorded answers 503, and its reservation is given back: the signature never left', async () => {
    // A new buyer PAT with a daily cap (its total not yet read by this process) takes the locked path: the
    // reservation commits, then the signature is recorded.
    const { session } = await signInWithNewKey(t);
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    const token = (
      await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', daily_cap_usd: '50' } })
    ).body.pat as string;
    const wallet = (
      await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { policy: { daily_cap_usd: '1' } } })
    ).body;
    // Hold the payment between its reservation and its signature (the signer stopped), then block the table
    // so that its record waits, and end the record's session each time it waits (it is tried twice). The
    // table is let go then, and the payment's release can run before it answers.
    t.signer.child.kill('SIGSTOP');
    const paying = t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
      token,
      body: { payment_requirements: paymentRequirements({ amount: '300000' }) },
    });
    const holder = await t.db.knex.transaction();
    let cut = 0;
    try {
      for (
        let i = 0;
        i < 500 && !(await t.db.knex('authorizations').where({ wallet_id: wallet.id, status: 'reserved' }).first());
        i++
      )
        await new Promise((r) => setTimeout(r, 10));
      await holder.raw('LOCK TABLE authorizations IN SHARE MODE');
      t.signer.child.kill('SIGCONT');
      cut = await endLockWaiters('UPDATE authorizations a SET status', 2);
    } finally {
      t.signer.child.kill('SIGCONT');
      await holder.commit();
    }
    assert.equal(cut, 2, 'the record was tried twice');
    const res = await paying;
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'database_unavailable');
    assert.equal(res.body.signature, undefined);
    let row: { status: string; signature: string | null; id: string } | undefined;
    for (let i = 0; i < 100; i++) {
      row = await t.db.knex('authorizations').where({ wallet_id: wallet.id }).first();
      if (row?.status === 'released') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(row?.status, 'released');
    assert.equal(row?.signature, null, 'no signature was stored');
    assert.equal(await daySpentMicro(t.db.knex, wallet.id), '0', 'the spend was given back');
    const audit = await t.db
      .knex('audit_events')
      .where({ chain_key: wallet.id, event_type: 'payment.released' })
      .first();
    assert.equal(audit.payload.reason, 'record_failed');
    assert.equal(audit.payload.authorization_id, row?.id);
  });

  it('shows the pool at /metrics: a held connection counts as used until it comes back, and none stays used after the outages', async () => {
    const read = async () => {
      const text = String((await t.request('GET', '/metrics')).body);
      const value = (re: RegExp) => Number(text.match(re)?.[1]);
      return {
        used: value(/treasury_db_pool_connections\{state="used"\} (\d+)/),
        max: value(/treasury_db_pool_max_connections (\d+)/),
        pending: value(/treasury_db_pool_pending_acquires (\d+)/),
      };
    };
    // The outages above end with work that finishes after its answer (a release, its audit row), and the service's
    // own background work takes a connection now and then: such a connection comes back within moments. One that
    // never comes back is a leak, and the reading stays above 0.
    const settled = async () => {
      let reading = await read();
      for (let i = 0; i < 100 && reading.used !== 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        reading = await read();
      }
      return reading;
    };
    assert.deepEqual(await settled(), { used: 0, max: 20, pending: 0 });
    const held = await t.db.knex.client.acquireConnection();
    try {
      assert.ok((await read()).used >= 1, 'the held connection counts as used');
    } finally {
      await t.db.knex.client.releaseConnection(held);
    }
    assert.equal((await settled()).used, 0);
  });
});

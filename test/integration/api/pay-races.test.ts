/**
 * Atomicity under races and crash safety, with two treasury-api processes sharing one PostgreSQL and one
 * signer: exactly N of 64 concurrent payments pass a cap that allows N (daily cap and velocity cap), and a
 * payment whose response was lost to a crash after COMMIT, retried with its Idempotency-Key, returns the
 * same signature and spends nothing more; one whose process died after signing and before writing left
 * nothing, and its retry is decided and counted once; one whose process died after reserving (a buyer PAT
 * with a daily cap reserves first in a process that has not read its total) is signed by its retry or,
 * never retried, given back once expired. A reservation is otherwise optimistic (one read, one write that
 * fails if the wallet's audit chain moved, then taken again): the races below go through that path — also
 * through a capped buyer PAT in both processes, whose day PostgreSQL holds to the cap — with the same
 * Idempotency-Key first used on both processes at once and with policy changes
 * (locked transactions) racing the payments — never a 500, the audit chain intact. And with every
 * PostgreSQL connection of both processes cut again and again mid-storm: answers are 200, 403 or 503
 * `database_unavailable`, the caps hold, each released signature is the recorded one, every payment whose
 * signature never left gives its reservation back, and both processes serve again afterwards.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, freePort, type TestDatabase } from '../../support/test-database.js';
import { signInBody } from '../../support/sign-in.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { ExpiredReservationSweeper } from '../../../src/api/pay/expired-reservation-sweeper.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { daySpentMicro } from '../../support/spend-totals.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const requirements = (amount: string) => paymentRequirements({ amount, maxTimeoutSeconds: 120 });

interface Api {
  url: string;
  child: ChildProcess;
}

/** `fault`: a crash point installed by the test preload test/support/pay-fault-preload.ts (production config has none). */
async function startApi(db: TestDatabase, signer: TestSigner, admin: string, fault?: string): Promise<Api> {
  const port = await freePort();
  const preload = fault ? ['--import', path.join(ROOT, 'test/support/pay-fault-preload.ts')] : [];
  const extraEnv: Record<string, string> = fault ? { TREASURY_TEST_PAY_FAULT: fault } : {};
  const child = spawn(process.execPath, nodeArgsFor('src/api/main.ts', preload), {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.connectionString,
      TREASURY_SIGNER_SOCKET: signer.socketPath,
      TREASURY_ADMIN_TOKEN: admin,
      TREASURY_PORT: String(port),
      TREASURY_LOG_LEVEL: 'warn',
      // Gone with this test process, whatever happens to the test (a crash point that never fired included).
      TREASURY_EXIT_WITH_PARENT: '1',
      ...extraEnv,
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return { url, child };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error('treasury-api did not become ready');
}

describe('pay races and crash safety (two API processes, one PostgreSQL)', function () {
  this.timeout(240_000);
  let signer: TestSigner;
  let db: TestDatabase;
  let apis: Api[] = [];
  let token: string;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;

  const post = async (api: Api, route: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(api.url + route, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    signer = await startTestSigner();
    db = await createTestDatabase();
    apis = [await startApi(db, signer, admin), await startApi(db, signer, admin)];
    const minted = await fetch(`${apis[0]!.url}/v1/treasury`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ owner_type: 'agent', owner_id: 'race' }),
    });
    token = ((await minted.json()) as { api_key: string }).api_key;
  });
  after(async () => {
    for (const api of apis) api.child.kill('SIGTERM');
    await sleep(500);
    await db?.drop();
    await signer?.stop();
  });

  /**
   * Signs in to `api` with a fresh EVM key (SIWE naming the API's own origin) and mints a Treasury PAT and an
   * agent (buyer) PAT with a daily cap: its first payment in a process takes the locked path, which reserves
   * before it signs.
   */
  async function cappedBuyer(
    api: Api,
    dailyCapUsd: string,
  ): Promise<{ treasuryPat: string; buyerPat: string; buyerPatId: string }> {
    const signedIn = await post(
      api,
      '/v1/identity/init',
      await signInBody({ request: (_method, route) => post(api, route, {}) }, api.url),
    );
    assert.ok(signedIn.status < 300, JSON.stringify(signedIn.body));
    const as = { authorization: `Bearer ${signedIn.body.session}` };
    const treasuryPat = (await post(api, '/v1/pats', { scope_type: 'treasury' }, as)).body.pat;
    const buyer = (await post(api, '/v1/pats', { scope_type: 'agent', daily_cap_usd: dailyCapUsd }, as)).body;
    return { treasuryPat, buyerPat: buyer.pat, buyerPatId: buyer.id };
  }

  /**
   * A buyer with a 50 USD daily cap (./cappedBuyer) on the first API process and one wallet of its Treasury
   * with a 10 USD daily cap; returns the buyer's authorization header and the wallet.
   */
  async function cappedBuyerWallet(): Promise<{ buyer: { authorization: string }; wallet: { id: string } }> {
    const { treasuryPat, buyerPat } = await cappedBuyer(apis[0]!, '50');
    const wallet = (
      await post(
        apis[0]!,
        '/v1/wallets',
        { policy: { daily_cap_usd: '10' } },
        { authorization: `Bearer ${treasuryPat}` },
      )
    ).body;
    return { buyer: { authorization: `Bearer ${buyerPat}` }, wallet };
  }

  /** Pays through a new API process that SIGKILLs itself at `fault`: the answer never arrives; returns once that process is gone. */
  async function payLostToCrash(
    fault: string,
    walletId: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<void> {
    const doomed = await startApi(db, signer, admin, fault);
    const lost = await post(doomed, `/v1/wallets/${walletId}/pay`, body, headers).catch((err: Error) => err);
    if (!(lost instanceof Error)) doomed.child.kill('SIGKILL');
    assert.ok(lost instanceof Error, 'the response never arrived');
    await new Promise((resolve) =>
      doomed.child.exitCode !== null || doomed.child.signalCode !== null
        ? resolve(null)
        : doomed.child.once('exit', resolve),
    );
    assert.equal(doomed.child.signalCode, 'SIGKILL');
  }

  async function race(policy: Record<string, unknown>, expected: number) {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy })).body;
    const results = await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        post(apis[i % 2]!, `/v1/wallets/${wallet.id}/pay`, { payment_requirements: requirements('100000') }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    assert.equal(
      ok.length,
      expected,
      JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 403)?.body ?? ''),
    );
    assert.equal(results.filter((r) => r.status === 403).length, 64 - expected);
    assert.equal(new Set(ok.map((r) => r.body.signature)).size, expected);
    const rows = await db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.equal(rows.length, expected, 'exactly N signatures recorded');
    const totals = await db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first();
    assert.equal(String(totals.spent_micro), String(expected * 100_000));
    assert.equal(totals.payment_count, expected, 'exactly N spends counted');
  }

  const conflictRetries = async () => {
    let total = 0;
    for (const api of apis) {
      const text = await (await fetch(`${api.url}/metrics`)).text();
      total += Number(text.match(/treasury_pay_conflict_retries_total\{kind="pay"\} (\d+)/)?.[1] ?? 0);
    }
    return total;
  };

  it('daily_cap_usd: exactly N of 64 concurrent pays across two processes', async () => {
    const before = await conflictRetries();
    await race({ daily_cap_usd: '0.7' }, 7);
    console.log(`      reservations taken again after a concurrent change: ${(await conflictRetries()) - before}`);
  });

  it('one Idempotency-Key first used on both processes at once: one reservation, one signature', async () => {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '10' } })).body;
    const body = { payment_requirements: requirements('100000') };
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        post(apis[i % 2]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'twin-1' }),
      ),
    );
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.signature)).size, 1);
    assert.equal((await db.knex('authorizations').where({ wallet_id: wallet.id })).length, 1);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '100000');
  });

  it('a key first used on one process, retried on the other whose remembered snapshot is current: the stored result, nothing spent again', async () => {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '10' } })).body;
    const body = { payment_requirements: requirements('100000') };
    const first = await post(apis[0]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'moved-1' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    // The other process pays once without a key: it reads the wallet and remembers what its write left.
    assert.equal((await post(apis[1]!, `/v1/wallets/${wallet.id}/pay`, body)).status, 200);
    // The retry reaches it: a key it never saw is decided on that snapshot, and its UNIQUE (wallet, key) sends it back to a read.
    const before = await conflictRetries();
    const retried = await post(apis[1]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'moved-1' });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.body.signature, first.body.signature);
    assert.ok((await conflictRetries()) - before >= 1, 'the optimistic write met the earlier use of the key');
    const other = await post(
      apis[1]!,
      `/v1/wallets/${wallet.id}/pay`,
      { payment_requirements: requirements('200000') },
      { 'idempotency-key': 'moved-1' },
    );
    assert.equal(other.status, 409, JSON.stringify(other.body));
    assert.equal((await db.knex('authorizations').where({ wallet_id: wallet.id })).length, 2);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '200000');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
  });

  it('policy changes racing payments: every answer is 200 or 403, the audit chain verifies, spend matches the signatures', async () => {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '100' } })).body;
    const put = (i: number) =>
      fetch(`${apis[i % 2]!.url}/v1/wallets/${wallet.id}/policy`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        // Each put a policy of its own (an unchanged policy writes nothing): loose and tight in turn.
        body: JSON.stringify({ daily_cap_usd: i % 2 === 0 ? String(101 + i) : `0.0000${String(i).padStart(2, '0')}` }),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const [pays, puts] = await Promise.all([
      Promise.all(
        Array.from({ length: 48 }, (_, i) =>
          post(apis[i % 2]!, `/v1/wallets/${wallet.id}/pay`, { payment_requirements: requirements('1000') }),
        ),
      ),
      Promise.all(Array.from({ length: 12 }, (_, i) => sleep(i * 3).then(() => put(i)))),
    ]);
    for (const r of pays) assert.ok(r.status === 200 || r.status === 403, JSON.stringify(r.body));
    for (const r of puts) assert.equal(r.status, 200, JSON.stringify(r.body));
    const signed = pays.filter((r) => r.status === 200).length;
    assert.equal((await db.knex('authorizations').where({ wallet_id: wallet.id })).length, signed);
    const totals = await db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first();
    assert.equal(String(totals?.spent_micro ?? 0), String(signed * 1000));
    const chain = await verifyAuditChain(db.knex, wallet.id);
    assert.equal(chain.ok, true, JSON.stringify(chain));
    const events = await db.knex('audit_events').where({ chain_key: wallet.id });
    assert.equal(events.length, 1 + 48 + 12, 'created, one row per pay (reserved or denied), one per policy change');
  });

  it('velocity_cap: exactly N of 64 concurrent pays across two processes', async () => {
    await race({ velocity_cap: { max_count: 9, window_seconds: 3600 } }, 9);
  });

  it('a buyer PAT with a daily cap: each process decides on the total it remembers, and PostgreSQL holds the day to the cap — exactly N of 64 concurrent pays across two processes and four wallets', async () => {
    const { treasuryPat, buyerPat, buyerPatId } = await cappedBuyer(apis[0]!, '0.5');
    const wallets = await Promise.all(
      Array.from(
        { length: 4 },
        async (_, i) =>
          (await post(apis[0]!, '/v1/wallets', { label: `pat-${i}` }, { authorization: `Bearer ${treasuryPat}` })).body
            .id as string,
      ),
    );
    const pay = (api: Api, walletId: string) =>
      post(
        api,
        `/v1/wallets/${walletId}/pay`,
        { payment_requirements: requirements('10000') },
        { authorization: `Bearer ${buyerPat}` },
      );
    const capChecks = async (source: string) => {
      let total = 0;
      for (const api of apis)
        total += Number(
          (await (await fetch(`${api.url}/metrics`)).text()).match(
            new RegExp(`treasury_pat_cap_checks_total\\{source="${source}"\\} (\\d+)`),
          )?.[1] ?? 0,
        );
      return total;
    };
    // One payment through each process: each reads the PAT's total under its lock and remembers it.
    for (const api of apis) assert.equal((await pay(api, wallets[0]!)).status, 200);
    const remembered = await capChecks('remembered');
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => pay(apis[i % 2]!, wallets[i % 4]!)));
    // Each process remembers room for 48 more; together they would pass 96 % of the race without the CHECK.
    const ok = results.filter((r) => r.status === 200);
    assert.equal(ok.length, 48, JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.body ?? ''));
    assert.equal(results.filter((r) => r.status === 429 && r.body.error_code === 'MGMT_6014').length, 16);
    assert.ok(
      (await capChecks('remembered')) - remembered >= 24,
      'payments were decided on the remembered total, without the PAT lock',
    );
    assert.equal((await db.knex('authorizations').whereIn('wallet_id', wallets)).length, 50);
    const days = await db.knex('pat_spend_totals').where({ token_id: buyerPatId });
    assert.deepEqual(
      days.map((r) => [String(r.spent_micro), String(r.cap_micro)]),
      [['500000', '500000']],
      'the day is exactly at the cap',
    );
    for (const id of wallets) assert.equal((await verifyAuditChain(db.knex, id)).ok, true);
  });

  it('PostgreSQL connections cut again and again mid-storm: never a 500, the caps hold, every released signature is recorded, the chains verify', async () => {
    // Four wallets whose daily cap allows 5 payments each; 96 payments across both processes while every
    // connection of theirs (pool and group-commit writers) is terminated every 20 ms, as a failover or an
    // operator's pg_terminate_backend would.
    const wallets = await Promise.all(
      Array.from(
        { length: 4 },
        async () => (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '0.5' } })).body,
      ),
    );
    const chaos = new pg.Client(db.connectionString);
    await chaos.connect();
    let cut = 0;
    let storming = true;
    const cutter = (async () => {
      while (storming) {
        const r = await chaos.query(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'treasury-api'",
        );
        cut += r.rows[0].n as number;
        await sleep(20);
      }
    })();
    let pays: Array<{ status: number; body: any; wallet: string }>;
    try {
      pays = await Promise.all(
        Array.from({ length: 96 }, (_, i) =>
          sleep(i * 4).then(() =>
            post(apis[i % 2]!, `/v1/wallets/${wallets[i % 4]!.id}/pay`, {
              payment_requirements: requirements('100000'),
            }).then((r) => ({ ...r, wallet: wallets[i % 4]!.id })),
          ),
        ),
      );
    } finally {
      storming = false;
      await cutter;
      await chaos.end();
    }
    assert.ok(cut > 0, 'connections were cut during the storm');

    const statuses = new Map<string, number>();
    for (const r of pays)
      statuses.set(
        `${r.status} ${r.body.error_code ?? ''}`.trim(),
        (statuses.get(`${r.status} ${r.body.error_code ?? ''}`.trim()) ?? 0) + 1,
      );
    console.log(`      ${cut} connections cut; answers: ${[...statuses].map(([k, n]) => `${k} × ${n}`).join(', ')}`);
    for (const r of pays) {
      assert.ok(
        r.status === 200 || r.status === 403 || (r.status === 503 && r.body.error_code === 'database_unavailable'),
        JSON.stringify(r.body),
      );
      if (r.status === 503) assert.equal(r.body.recovery?.kind ?? 'retry', 'retry');
    }
    // A payment whose signature never left (its record, or its own write, met a dropped connection) gives its
    // reservation back once the database answers: none stays reserved.
    const reserved = () =>
      db
        .knex('authorizations')
        .whereIn(
          'wallet_id',
          wallets.map((w) => w.id),
        )
        .andWhere({ status: 'reserved' })
        .count({ n: '*' });
    for (let i = 0; i < 100 && Number((await reserved())[0]?.n) > 0; i++) await sleep(100);
    assert.equal(Number((await reserved())[0]?.n), 0, 'no reservation is left hanging');
    for (const wallet of wallets) {
      const rows = await db.knex('authorizations').where({ wallet_id: wallet.id });
      const released = pays.filter((r) => r.wallet === wallet.id && r.status === 200);
      assert.ok(released.length <= 5, `at most 5 payments of wallet ${wallet.id} signed`);
      for (const r of released) {
        const row = rows.find((x) => x.id === r.body.authorization_id);
        assert.ok(row, 'a released payment has its row');
        assert.equal(row.status, 'signed');
        assert.equal(row.signature, r.body.signature, 'the released signature is the recorded one');
      }
      // Only signed payments count once the releases are done, and never over the cap.
      const counted = rows.filter((x) => x.status === 'signed').reduce((sum, x) => sum + BigInt(x.amount_micro), 0n);
      const totals = await db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first();
      assert.equal(
        String(totals?.spent_micro ?? 0),
        String(counted),
        'the day total is the sum of the signed payments',
      );
      assert.ok(counted <= 500_000n, 'the daily cap holds');
      assert.ok(rows.filter((x) => x.status === 'signed').length <= 5);
      const chain = await verifyAuditChain(db.knex, wallet.id);
      assert.equal(chain.ok, true, JSON.stringify(chain));
    }
    // Both processes serve again once the connections stay up.
    for (const api of apis) {
      const fresh = (await post(api, '/v1/wallets', { policy: { daily_cap_usd: '1' } })).body;
      const r = await post(api, `/v1/wallets/${fresh.id}/pay`, { payment_requirements: requirements('100000') });
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  });

  it('a pay whose response was lost after COMMIT, retried with its Idempotency-Key, returns the same signature and adds no spend', async () => {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '10' } })).body;
    const body = { payment_requirements: requirements('250000') };
    await payLostToCrash('kill_after_pay_commit', wallet.id, body, { 'idempotency-key': 'crash-1' });
    const stored = await db.knex('authorizations').where({ wallet_id: wallet.id, idempotency_key: 'crash-1' }).first();
    assert.ok(stored, 'the payment was committed before the crash');

    const retried = await post(apis[1]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'crash-1' });
    assert.equal(retried.status, 200);
    assert.equal(retried.body.signature, stored.signature);
    assert.equal(retried.body.authorization.nonce, stored.nonce);
    assert.equal((await db.knex('authorizations').where({ wallet_id: wallet.id })).length, 1);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '250000');
  });

  it('a pay whose process died after signing and before its write, retried with its Idempotency-Key: nothing was recorded, so it is decided and counted once', async () => {
    const wallet = (await post(apis[0]!, '/v1/wallets', { policy: { daily_cap_usd: '10' } })).body;
    const body = { payment_requirements: requirements('400000') };
    await payLostToCrash('kill_after_pay_sign', wallet.id, body, { 'idempotency-key': 'crash-3' });
    assert.equal(
      (await db.knex('authorizations').where({ wallet_id: wallet.id })).length,
      0,
      'the signature was never written, nor its decision',
    );
    assert.equal((await db.knex('wallet_spend_totals').where({ wallet_id: wallet.id })).length, 0, 'nothing counted');
    assert.equal(
      (await db.knex('audit_events').where({ chain_key: wallet.id }).whereLike('event_type', 'payment.%')).length,
      0,
    );

    const retried = await post(apis[1]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'crash-3' });
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    const again = await post(apis[0]!, `/v1/wallets/${wallet.id}/pay`, body, { 'idempotency-key': 'crash-3' });
    assert.equal(again.body.signature, retried.body.signature, "the key now holds the retry's result");
    const rows = await db.knex('authorizations').where({ wallet_id: wallet.id });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 'signed');
    assert.equal(rows[0].signature, retried.body.signature);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '400000', 'counted once');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
  });

  it('a pay whose process died after reserving and before signing, retried with its Idempotency-Key, signs that same reservation', async () => {
    // A buyer PAT with a daily cap takes the locked path in a process that has not read its total yet (the
    // doomed one is new), which commits the reservation before asking the signer.
    const { buyer, wallet } = await cappedBuyerWallet();
    const body = { payment_requirements: requirements('300000') };
    await payLostToCrash('kill_after_pay_reserve', wallet.id, body, { ...buyer, 'idempotency-key': 'crash-2' });
    const reserved = await db
      .knex('authorizations')
      .where({ wallet_id: wallet.id, idempotency_key: 'crash-2' })
      .first();
    assert.equal(reserved.status, 'reserved');
    assert.equal(reserved.signature, null, 'no signature exists yet');

    const [a, b] = await Promise.all([
      post(apis[0]!, `/v1/wallets/${wallet.id}/pay`, body, { ...buyer, 'idempotency-key': 'crash-2' }),
      post(apis[1]!, `/v1/wallets/${wallet.id}/pay`, body, { ...buyer, 'idempotency-key': 'crash-2' }),
    ]);
    assert.equal(a.status, 200, JSON.stringify(a.body));
    assert.equal(b.status, 200, JSON.stringify(b.body));
    assert.equal(a.body.authorization.nonce, reserved.nonce, 'the reserved message is signed, not a new one');
    assert.equal(a.body.signature, b.body.signature, 'concurrent retries answer with the one recorded signature');
    const row = await db.knex('authorizations').where({ id: reserved.id }).first();
    assert.equal(row.status, 'signed');
    assert.equal(row.signature, a.body.signature);
    assert.equal((await db.knex('authorizations').where({ wallet_id: wallet.id })).length, 1);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '300000', 'counted once');
  });

  it('a pay whose process died after reserving and which nobody retried: once its authorization expired, the sweep gives its spend back', async () => {
    const { buyer, wallet } = await cappedBuyerWallet();
    const signed = await post(
      apis[0]!,
      `/v1/wallets/${wallet.id}/pay`,
      { payment_requirements: requirements('100000') },
      buyer,
    );
    assert.equal(signed.status, 200);
    await payLostToCrash('kill_after_pay_reserve', wallet.id, { payment_requirements: requirements('300000') }, buyer);
    await payLostToCrash(
      'kill_after_pay_reserve',
      wallet.id,
      { payment_requirements: paymentRequirements({ amount: '200000', maxTimeoutSeconds: 86_400 }) },
      buyer,
    );
    const rows = await db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at');
    assert.deepEqual(
      rows.map((r) => r.status),
      ['signed', 'reserved', 'reserved'],
    );
    const spent = async () =>
      String(
        (await db.knex('wallet_spend_totals').where({ wallet_id: wallet.id, window_kind: 'day' }).first()).spent_micro,
      );
    assert.equal(await spent(), '600000', 'the dead processes left their reservations counted');

    // An hour later: the 120 s authorization has expired, the one-day one has not.
    const metrics = createTreasuryMetrics();
    const sweeper = new ExpiredReservationSweeper(db.knex, metrics, () => new Date(Date.now() + 3_600_000));
    assert.equal(await sweeper.sweep(), 1);
    const after = await db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at');
    assert.deepEqual(
      after.map((r) => r.status),
      ['signed', 'released', 'reserved'],
      'only the expired reservation; the signed payment and the open reservation are left',
    );
    assert.equal(after[1].idempotency_key, null);
    assert.equal(await spent(), '300000', 'its 0.30 given back');
    const released = await db.knex('audit_events').where({ chain_key: wallet.id, event_type: 'payment.released' });
    assert.equal(released.length, 1);
    assert.equal(released[0].actor, 'treasury-sweeper');
    assert.equal(released[0].payload.reason, 'expired_unsigned');
    assert.equal(released[0].payload.authorization_id, rows[1].id);
    assert.equal(released[0].payload.amount_usd, '0.3');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
    assert.match(
      await metrics.registry.metrics(),
      /treasury_pay_decisions_total\{kind="pay",outcome="expired_released"\} 1/,
    );
    assert.equal(await sweeper.sweep(), 0, 'a second sweep finds nothing more');
    // The same process, still an hour ahead, and another process sweeping at once: released once.
    const tomorrow = () => new Date(Date.now() + 2 * 86_400_000);
    const both = await Promise.all([
      new ExpiredReservationSweeper(db.knex, metrics, tomorrow).sweep(),
      new ExpiredReservationSweeper(db.knex, metrics, tomorrow).sweep(),
    ]);
    assert.deepEqual(both.sort(), [0, 1], 'two sweepers racing release the one-day reservation once');
    assert.equal(await spent(), '100000');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
  });

  it("a Solana reservation is swept only once its transaction's blockhash cannot land any more, an EVM one after the grace", async () => {
    const { buyer, wallet } = await cappedBuyerWallet();
    for (const amount of ['100000', '200000'])
      await payLostToCrash('kill_after_pay_reserve', wallet.id, { payment_requirements: requirements(amount) }, buyer);
    const rows = await db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at');
    assert.deepEqual(
      rows.map((r) => r.status),
      ['reserved', 'reserved'],
    );
    // The second stands for a Solana payment's reservation: its valid_before is the x402 timeout, while its
    // transaction may land until its blockhash expires. Only the sweeper's reading of the row matters here.
    const validBefore = Number(rows[0].valid_before);
    await db
      .knex('authorizations')
      .where({ id: rows[1].id })
      .update({
        network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
        asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
        from_address: 'GsbwXfJraMomNxBcjYLcG3mxkBUiyWXAB32fGbSMQRdW',
        to_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
        valid_before: String(validBefore),
      });
    const metrics = createTreasuryMetrics();
    let secondsPast = 100;
    const clock = () => new Date((validBefore + secondsPast) * 1000);
    const statuses = async () =>
      (await db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at')).map((r) => r.status);

    // 100 s past valid_before: past the 60-s grace, inside a blockhash's lifetime beyond it.
    const sweeper = new ExpiredReservationSweeper(db.knex, metrics, clock, { lookbackSeconds: 3_600 });
    assert.equal(await sweeper.sweep(), 1);
    assert.deepEqual(await statuses(), ['released', 'reserved'], 'the Solana reservation still counts');
    assert.equal(await daySpentMicro(db.knex, wallet.id), '200000');
    // The same sweeper, past the grace and the landing time: the range it swept up to was the Solana rows' own.
    secondsPast = 181;
    assert.equal(await sweeper.sweep(), 1);
    assert.deepEqual(await statuses(), ['released', 'released']);
    assert.equal(await daySpentMicro(db.knex, wallet.id), '0');
    assert.equal((await verifyAuditChain(db.knex, wallet.id)).ok, true);
  });
});

/**
 * A reservation commits without waiting for the WAL flush (ADR 0007); its signature's record commits with
 * the server's durability, which flushes the reservation with it. So a database crash may lose reservations
 * whose signatures never left, and never one whose signature did. These tests hold the pay path to that:
 *
 * - a lost reservation (its rows gone as a crash would leave them) is never answered with its signature, and
 *   the API, which still remembers the lost row as its wallet's chain head, is refused by the database
 *   (audit_events_extends_chain) and reads again: the chain stays whole, the totals count what was signed;
 * - a real crash (PostgreSQL's immediate shutdown: its processes quit without writing their WAL buffers)
 *   in the middle of payments: every 200 and every 403 answered before it survives it; payments in flight
 *   get 503; afterwards every wallet pays again and every chain verifies.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { freePort, type TestDatabase } from '../../support/test-database.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { verifyAuditChain } from '../../../src/audit/audit-ledger.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../../src/db/embedded-postgres.js';
import { createKnex, migrateLatest } from '../../../src/db/knex-client.js';

type Answer = { status: number; body: any };

const pay = (t: TestTreasury, token: string, walletId: string, amount: string): Promise<Answer> =>
  t.request('POST', `/v1/wallets/${walletId}/pay`, { token, body: { payment_requirements: paymentRequirements({ amount }) } });

async function waitFor(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const spentToday = async (db: TestDatabase, walletId: string) => String((await db.knex('wallet_spend_totals').where({ wallet_id: walletId, window_kind: 'day' }).first())?.spent_micro ?? '0');

describe('pay path across a lost reservation (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    t?.signer.child.kill('SIGCONT');
    await t?.stop();
  });

  it('a reservation lost before its signature was recorded: 503 without the signature; the next payment reads again and the chain stays whole', async () => {
    const token = (await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'agent', owner_id: 'lost' } })).body.api_key;
    const wallet = (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '10' } } })).body as { id: string };
    assert.equal((await pay(t, token, wallet.id, '100000')).status, 200);

    // A payment reserved and waiting for its signature...
    t.signer.child.kill('SIGSTOP');
    const inFlight = pay(t, token, wallet.id, '200000');
    await waitFor('the reservation', async () => (await t.db.knex('authorizations').where({ wallet_id: wallet.id, status: 'reserved' })).length === 1);
    // ...whose commit a crash loses: its authorization, its audit row (the chain's head) and its spend are gone.
    const lost = await t.db.knex('authorizations').where({ wallet_id: wallet.id, status: 'reserved' }).first();
    await t.db.knex.transaction(async (trx) => {
      await trx.raw('SET LOCAL session_replication_role = replica'); // past the append-only trigger, as a lost WAL suffix is
      await trx.raw('DELETE FROM audit_events WHERE chain_key = ? AND seq = (SELECT max(seq) FROM audit_events WHERE chain_key = ?)', [wallet.id, wallet.id]);
      await trx('authorizations').where({ id: lost.id }).delete();
      await trx.raw('UPDATE wallet_spend_totals SET spent_micro = spent_micro - 200000, payment_count = payment_count - 1 WHERE wallet_id = ?', [wallet.id]);
    });
    t.signer.child.kill('SIGCONT');

    const answer = await inFlight;
    assert.equal(answer.status, 503, JSON.stringify(answer.body));
    assert.equal(answer.body.error_code, 'database_unavailable');
    assert.equal(answer.body.signature, undefined, 'the signature of a lost reservation never leaves');

    // The API still remembers the lost row as the wallet's chain head: the database refuses a write chained on
    // it, and the payment is decided again on what is really there.
    const metrics = async () => Number(/treasury_pay_conflict_retries_total\{kind="pay"\} (\d+)/.exec(String((await t.request('GET', '/metrics')).body))?.[1] ?? 0);
    const retriesBefore = await metrics();
    const next = await pay(t, token, wallet.id, '300000');
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.ok((await metrics()) > retriesBefore, 'the write chained on the lost head was refused and taken again');

    const chain = await verifyAuditChain(t.db.knex, wallet.id);
    assert.equal(chain.ok, true, JSON.stringify(chain));
    assert.deepEqual((await t.db.knex('authorizations').where({ wallet_id: wallet.id }).orderBy('created_at')).map((r) => r.status), ['signed', 'signed']);
    assert.equal(await spentToday(t.db, wallet.id), '400000', 'only the signed payments count');
  });
});

describe('pay path across a PostgreSQL crash (HTTP, SoftHSM, own PostgreSQL)', function () {
  this.timeout(180_000);
  let dir: string;
  let port: number;
  let server: EmbeddedPostgresHandle | undefined;
  let db: TestDatabase;
  let t: TestTreasury;
  // WAL writer every 10 s (its longest): an asynchronous commit waits in PostgreSQL's WAL buffers until a
  // synchronous commit or the WAL writer writes it out — so the crash below finds the reservations there.
  const settings = { wal_writer_delay: '10s' };
  const start = () => startEmbeddedPostgres({ dir, port, settings });

  /** Immediate shutdown (what pg_ctl -m immediate sends): every server process quits without writing its buffers. */
  const crash = async () => {
    const pidFile = path.join(dir, 'data', 'postmaster.pid');
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8').split('\n')[0]!, 10);
    process.kill(pid, 'SIGQUIT');
    await waitFor('the server to quit', async () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    });
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-crash-pg-'));
    port = await freePort();
    server = await start();
    // The crash cuts this pool's connections too: knex's warnings about them are expected, not printed.
    const knex = createKnex(server.connectionString, 10, 'treasury-test', { warn: () => undefined, error: () => undefined });
    await migrateLatest(knex);
    db = { name: 'treasury', connectionString: server.connectionString, knex, drop: async () => undefined };
    t = await startTestTreasury({ database: db });
  });
  after(async () => {
    t?.signer.child.kill('SIGCONT');
    await t?.stop();
    await db?.knex.destroy();
    await server?.stop().catch(() => undefined);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers given before a crash survive it, payments in flight get 503 and lose nothing that left; then every wallet pays again and every chain verifies', async () => {
    const token = (await t.request('POST', '/v1/treasury', { token: t.adminToken, body: { owner_type: 'agent', owner_id: 'crash' } })).body.api_key;
    const wallets = await Promise.all([1, 2, 3, 4].map(async () => (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '5' } } })).body as { id: string }));

    // Answered before the crash: payments (200) and a denial (403), each after its commit.
    const signed: Array<{ wallet: string; answer: Answer }> = [];
    for (let round = 0; round < 3; round++) {
      for (const w of wallets) signed.push({ wallet: w.id, answer: await pay(t, token, w.id, '100000') });
    }
    const denied = await pay(t, token, wallets[0]!.id, '9000000');
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    for (const s of signed) assert.equal(s.answer.status, 200, JSON.stringify(s.answer.body));

    // In flight at the crash: reserved, waiting for signatures that come back only after it.
    t.signer.child.kill('SIGSTOP');
    const inFlight = wallets.flatMap((w) => [1, 2].map(async () => ({ wallet: w.id, answer: await pay(t, token, w.id, '200000') })));
    await waitFor('the reservations', async () => (await db.knex('authorizations').whereIn('wallet_id', wallets.map((w) => w.id)).where({ status: 'reserved' })).length === 8);
    await crash();
    t.signer.child.kill('SIGCONT');
    const answers = await Promise.all(inFlight);
    server = await start();

    for (const { answer } of answers) {
      assert.equal(answer.status, 503, JSON.stringify(answer.body));
      assert.equal(answer.body.error_code, 'database_unavailable', JSON.stringify(answer.body));
    }
    // What was answered before the crash is there: each 200's signature on its row, the 403's decision.
    for (const s of signed) {
      const row = await db.knex('authorizations').where({ id: s.answer.body.authorization_id }).first();
      assert.equal(row?.status, 'signed');
      assert.equal(row?.signature, s.answer.body.signature);
    }
    assert.ok(await db.knex('policy_decisions').where({ id: denied.body.decision_id }).first(), 'the denial answered before the crash is recorded');
    // The reservations in flight were lost with the WAL buffers (none of their signatures left).
    const leftOver = await db.knex('authorizations').whereIn('wallet_id', wallets.map((w) => w.id)).whereNot({ status: 'signed' });
    assert.deepEqual(leftOver, [], 'the crash lost the unflushed reservations (and a surviving one would have been released)');

    // Every wallet pays again — the API remembered heads the crash lost — and every chain verifies.
    for (const w of wallets) {
      const again = await pay(t, token, w.id, '100000');
      assert.equal(again.status, 200, JSON.stringify(again.body));
      const chain = await verifyAuditChain(db.knex, w.id);
      assert.equal(chain.ok, true, JSON.stringify(chain));
      assert.equal(await spentToday(db, w.id), '400000', 'the three payments before the crash and the one after');
    }
  });
});

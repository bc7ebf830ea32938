/**
 * PostgreSQL crashing under the pay path (its immediate shutdown: every server process quits at once, as on
 * a kill or a power cut of the database host, and the server recovers from its WAL on the next start):
 * every 200 and every 403 answered before the crash survives it; payments in flight — decided, their
 * signatures made while the database was down — get 503 `database_unavailable`, their signatures never
 * leave and nothing of them is counted; afterwards every wallet pays again and every chain verifies.
 * Through buyer PATs with a daily cap whose totals the process does not know yet (the locked path, which
 * reserves before it signs) the reservations in flight survive the crash and the API gives them back once
 * the database answers again.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { freePort, type TestDatabase } from '../../support/test-database.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../../src/api/db/embedded-postgres.js';
import { createKnex, migrateLatest } from '../../../src/api/db/knex-client.js';

type Answer = { status: number; body: any };

const pay = (t: TestTreasury, token: string, walletId: string, amount: string): Promise<Answer> =>
  t.request('POST', `/v1/wallets/${walletId}/pay`, {
    token,
    body: { payment_requirements: paymentRequirements({ amount }) },
  });

async function waitFor(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const spentToday = async (db: TestDatabase, walletId: string) =>
  String(
    (await db.knex('wallet_spend_totals').where({ wallet_id: walletId, window_kind: 'day' }).first())?.spent_micro ??
      '0',
  );

describe('pay path across a PostgreSQL crash (HTTP, SoftHSM, own PostgreSQL)', function () {
  this.timeout(180_000);
  let dir: string;
  let port: number;
  let server: EmbeddedPostgresHandle | undefined;
  let db: TestDatabase;
  let t: TestTreasury;
  const start = () => startEmbeddedPostgres({ dir, port });

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
    const knex = createKnex(server.connectionString, 10, 'treasury-test', {
      warn: () => undefined,
      error: () => undefined,
    });
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

  /** Payments the API has decided so far (its decision timer's count). */
  const decisions = async () =>
    Number(
      /treasury_db_transaction_duration_seconds_count\{operation="pay"\} (\d+)/.exec(
        await (await fetch(`${t.baseUrl}/metrics`)).text(),
      )?.[1] ?? 0,
    );

  it('answers given before a crash survive it; payments in flight get 503 and count nothing; then every wallet pays again and every chain verifies', async () => {
    const token = await mintAgentKey(t, 'crash');
    const wallets = await Promise.all(
      [1, 2, 3, 4].map(
        async () =>
          (await t.request('POST', '/v1/wallets', { token, body: { policy: { daily_cap_usd: '5' } } })).body as {
            id: string;
          },
      ),
    );

    // Answered before the crash: payments (200) and a denial (403), each after its commit.
    const signed: Array<{ wallet: string; answer: Answer }> = [];
    for (let round = 0; round < 3; round++) {
      for (const w of wallets) signed.push({ wallet: w.id, answer: await pay(t, token, w.id, '100000') });
    }
    const denied = await pay(t, token, wallets[0]!.id, '9000000');
    assert.equal(denied.status, 403, JSON.stringify(denied.body));
    for (const s of signed) assert.equal(s.answer.status, 200, JSON.stringify(s.answer.body));

    // In flight at the crash: decided, waiting for signatures that come back only after it.
    const decidedBefore = await decisions();
    t.signer.child.kill('SIGSTOP');
    const inFlight = wallets.flatMap((w) =>
      [1, 2].map(async () => ({ wallet: w.id, answer: await pay(t, token, w.id, '200000') })),
    );
    await waitFor('the decisions', async () => (await decisions()) === decidedBefore + 8);
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
    assert.ok(
      await db.knex('policy_decisions').where({ id: denied.body.decision_id }).first(),
      'the denial answered before the crash is recorded',
    );
    // The payments in flight were to be written with their signatures, which found the database gone: nothing
    // of them was written, and no signature of theirs left.
    const rows = await db.knex('authorizations').whereIn(
      'wallet_id',
      wallets.map((w) => w.id),
    );
    assert.equal(rows.length, signed.length);
    assert.ok(rows.every((r) => r.status === 'signed'));
    for (const w of wallets) assert.equal(await spentToday(db, w.id), '300000', 'only the signed payments count');

    // Every wallet pays again, and every chain verifies.
    for (const w of wallets) {
      const again = await pay(t, token, w.id, '100000');
      assert.equal(again.status, 200, JSON.stringify(again.body));
      const chain = await verifyAuditChain(db.knex, w.id);
      assert.equal(chain.ok, true, JSON.stringify(chain));
      assert.equal(await spentToday(db, w.id), '400000', 'the three payments before the crash and the one after');
    }
  });

  it('through a buyer PAT with a daily cap (reserved before signing): the reservations in flight survive the crash and are given back', async () => {
    const { session } = await signInWithNewKey(t);
    const treasuryPat = (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } })).body
      .pat as string;
    // One capped buyer PAT per payment in flight: a PAT whose day this process has not read yet takes the
    // locked path (a known PAT with room left would sign first and write after, as in the test above).
    const buyers = await Promise.all(
      [1, 2, 3, 4].map(
        async () =>
          (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'agent', daily_cap_usd: '50' } }))
            .body.pat as string,
      ),
    );
    const wallets = await Promise.all(
      [1, 2].map(
        async () =>
          (await t.request('POST', '/v1/wallets', { token: treasuryPat, body: { policy: { daily_cap_usd: '5' } } }))
            .body as { id: string },
      ),
    );
    for (const w of wallets) assert.equal((await pay(t, treasuryPat, w.id, '100000')).status, 200);
    /** The authorizations of these wallets. */
    const walletAuthorizations = () =>
      db.knex('authorizations').whereIn(
        'wallet_id',
        wallets.map((w) => w.id),
      );

    t.signer.child.kill('SIGSTOP');
    const inFlight = wallets.flatMap((w, i) => [0, 1].map((j) => pay(t, buyers[i * 2 + j]!, w.id, '200000')));
    const reserved = () => walletAuthorizations().where({ status: 'reserved' });
    await waitFor('the reservations', async () => (await reserved()).length === 4);
    await crash();
    t.signer.child.kill('SIGCONT');
    const answers = await Promise.all(inFlight);
    server = await start();
    for (const answer of answers)
      assert.equal(answer.body.error_code, 'database_unavailable', JSON.stringify(answer.body));
    // No signature of theirs left, so the API gives them back (`record_failed`, retried after 1 and 5 s while
    // the database recovers).
    const unsigned = () => walletAuthorizations().whereNot({ status: 'signed' });
    await waitFor('the releases', async () => (await unsigned()).every((r) => r.status === 'released'), 20_000);
    assert.equal((await unsigned()).length, 4);
    for (const w of wallets) {
      assert.equal(await spentToday(db, w.id), '100000', 'only the signed payment counts');
      assert.equal((await pay(t, buyers[0]!, w.id, '100000')).status, 200);
      assert.equal((await verifyAuditChain(db.knex, w.id)).ok, true);
    }
  });
});

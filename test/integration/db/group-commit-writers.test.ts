/**
 * The pay path's group-commit writers against real PostgreSQL (wallets made through the HTTP API).
 * Decisions: writes handed over together share one statement and commit together, spend totals are summed
 * per window, and a failed statement writes nothing — every write in it and every write queued behind it is
 * refused, and the generation moves on, so that no write decided on a lost one can leave a gap in an audit
 * chain; unless it failed because of one row (a value PostgreSQL cannot hold, a constraint the row breaks):
 * then only that row and its wallet's later writes are refused, and only that wallet's generation moves on,
 * while the other wallets' writes of the statement commit. A place kept for a decision still being signed holds back its wallet's later writes, not other
 * wallets', and its signed write lands signed. Signatures: a reserved row takes its signature once; every
 * caller hears what the row holds.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildAuditRow, verifyAuditChain, type AuditHead } from '../../../src/api/audit/audit-ledger.js';
import { ReservationBatchAborted, ReservationWriter } from '../../../src/api/pay/store/reservation-writer.js';
import { signedWrite, type DecisionWrite } from '../../../src/api/pay/store/decision-write.js';
import { SIGNATURE_RECORD_SQL, SignatureRecorder } from '../../../src/api/pay/store/signature-recorder.js';
import { walletLockKey } from '../../../src/api/db/wallet-transaction.js';
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../../support/api-harness.js';

const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
const AT = new Date('2026-11-23T10:00:00Z');
const WINDOWS = { day: '2026-11-23', week: '2026-11-23', month: '2026-11-01' };

describe('group-commit writers (PostgreSQL)', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  let token: string;

  before(async () => {
    t = await startTestTreasury();
    token = await mintAgentKey(t, 'writer');
  });
  const writers: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    await Promise.all(writers.map((w) => w.close()));
    await t?.stop();
  });

  async function wallet() {
    const res = await t.request('POST', '/v1/wallets', { token, body: { policy: {} } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const head = (await t.db
      .knex('audit_events')
      .where({ chain_key: res.body.id })
      .orderBy('seq', 'desc')
      .first('seq', 'hash')) as AuditHead;
    return { id: res.body.id as string, address: res.body.address as string, head };
  }

  /** Two new wallets and a writer that notes the size of each statement it sends. */
  async function twoWalletsAndWriter() {
    const [a, b] = [await wallet(), await wallet()];
    const batches: number[] = [];
    const writer = new ReservationWriter(t.db.knex, { onBatch: (n) => batches.push(n) });
    writers.push(writer);
    return { a, b, batches, writer };
  }

  /** The audit row of `eventType`, by the test at AT, on the chain `chainKey` after `head`. */
  const testAudit = (head: AuditHead, chainKey: string, eventType: string, payload: Record<string, unknown>) =>
    buildAuditRow(head, { chainKey, eventType, actor: 'test', payload, at: AT });

  /** The same spend and count in the day, week and month windows (what totals() answers). */
  const inEveryWindow = (spent: string, count: number) => ({
    day: { spent, count },
    month: { spent, count },
    week: { spent, count },
  });

  /** Each wallet's audit chain verifies. */
  async function assertChainsHold(...walletIds: string[]): Promise<void> {
    for (const walletId of walletIds) assert.equal((await verifyAuditChain(t.db.knex, walletId)).ok, true);
  }

  /**
   * What was decided on `head` for wallet `w`: `rows` under the wallet's lock with their audit row (`eventType`,
   * `payload`), and the wallet's audit head after it.
   */
  function decided(
    w: { id: string },
    head: AuditHead,
    eventType: string,
    payload: Record<string, unknown>,
    rows: Omit<DecisionWrite, 'lockKey' | 'audit'>,
  ): { write: DecisionWrite; head: AuditHead } {
    const audit = testAudit(head, w.id, eventType, payload);
    return {
      write: { lockKey: walletLockKey(w.id).toString(), ...rows, audit },
      head: { seq: audit.seq, hash: audit.hash },
    };
  }

  /** A reservation of `amount` micro-USD decided on `head`; `nonce` may be forced (to collide). */
  function reservation(
    w: { id: string; address: string },
    head: AuditHead,
    amount: bigint,
    nonce = `0x${randomBytes(32).toString('hex')}`,
  ): { write: DecisionWrite; head: AuditHead } {
    const decisionId = `pd_${randomBytes(12).toString('hex')}`;
    const authorizationId = `auth_${randomBytes(12).toString('hex')}`;
    return decided(
      w,
      head,
      'payment.reserved',
      { authorization_id: authorizationId },
      {
        authorization: {
          id: authorizationId,
          walletId: w.id,
          decisionId,
          kind: 'pay',
          scheme: 'exact',
          network: 'eip155:84532',
          asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
          from: w.address,
          to: SELLER,
          valueRaw: amount.toString(),
          amountMicro: amount.toString(),
          validAfter: '0',
          validBefore: '9999999999',
          nonce,
          capability: null,
          resource: null,
          idempotencyKey: null,
          requestHash: null,
          response: '{}',
          actor: 'test',
          at: AT,
          status: 'reserved',
          signature: null,
          signedAt: null,
        },
        spend: { walletId: w.id, windowStarts: WINDOWS, amountMicro: amount },
      },
    );
  }

  /** A denial decided on `head`: its decision row and its audit row. */
  function denial(w: { id: string }, head: AuditHead): { write: DecisionWrite; head: AuditHead; decisionId: string } {
    const decisionId = `pd_${randomBytes(12).toString('hex')}`;
    const denied = decided(
      w,
      head,
      'policy.denied',
      { decision_id: decisionId },
      {
        decision: {
          id: decisionId,
          walletId: w.id,
          outcome: 'deny',
          kind: 'pay',
          amountMicro: '5000',
          to: SELLER,
          capability: null,
          violations: '[{"rule":"per_tx_cap_usd"}]',
          headroom: '{}',
          at: AT,
        },
      },
    );
    return { ...denied, decisionId };
  }

  /** The signature stored on authorization `id` (null while it has none). */
  async function storedSignature(id: string): Promise<string | null> {
    return (await t.db.knex('authorizations').where({ id }).first()).signature;
  }

  async function totals(walletId: string) {
    const rows = await t.db.knex('wallet_spend_totals').where({ wallet_id: walletId }).orderBy('window_kind');
    return Object.fromEntries(
      rows.map((r: any) => [r.window_kind, { spent: String(r.spent_micro), count: Number(r.payment_count) }]),
    );
  }

  it('writes handed over together share one statement; a wallet chains several writes; totals are summed', async () => {
    const { a, b, batches, writer } = await twoWalletsAndWriter();
    const a1 = reservation(a, a.head, 1000n);
    const a2 = reservation(a, a1.head, 2000n);
    const a3 = reservation(a, a2.head, 3000n);
    const b1 = reservation(b, b.head, 500n);
    const b2 = denial(b, b1.head);
    // The first is sent at once; the others join the next statement.
    await Promise.all([
      writer.write(a1.write),
      writer.write(a2.write),
      writer.write(b1.write),
      writer.write(a3.write),
      writer.write(b2.write),
    ]);
    assert.deepEqual(batches, [1, 4]);
    // Only the denial has a decision row; the reservations' decisions are their authorization and audit rows.
    assert.deepEqual(
      (await t.db.knex('policy_decisions').whereIn('wallet_id', [a.id, b.id])).map((d: any) => [d.id, d.outcome]),
      [[b2.decisionId, 'deny']],
    );
    assert.equal(writer.generation, 0);
    assert.deepEqual(await totals(a.id), inEveryWindow('6000', 3));
    assert.deepEqual(await totals(b.id), inEveryWindow('500', 1));
    assert.equal(
      Number((await t.db.knex('authorizations').where({ wallet_id: a.id, status: 'reserved' }).count('* as n'))[0]!.n),
      3,
    );
    await assertChainsHold(a.id, b.id);
  });

  it("a row that breaks a constraint fails alone: its wallet's later writes are refused, other wallets' commit", async () => {
    const a = await wallet();
    const b = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    writers.push(writer);
    const nonce = `0x${'cd'.repeat(32)}`;
    const first = reservation(a, a.head, 1000n, nonce);
    await writer.write(first.write);
    const generationOfA = () => writer.generationOf(walletLockKey(a.id).toString());
    const generationOfB = () => writer.generationOf(walletLockKey(b.id).toString());
    const [aBefore, bBefore] = [generationOfA(), generationOfB()];

    // Sent alone: b's valid write; queued: a's write reusing the nonce (fails its statement), then a write of a
    // decided on it (head + 2), refused with it, and an unrelated valid write of b, which commits.
    const b1 = reservation(b, b.head, 100n);
    const clash = reservation(a, first.head, 1000n, nonce);
    const afterClash = reservation(a, clash.head, 1000n);
    const b2 = reservation(b, b1.head, 100n);
    const results = await Promise.allSettled([
      writer.write(b1.write),
      writer.write(clash.write),
      writer.write(afterClash.write),
      writer.write(b2.write),
    ]);
    assert.equal(
      results[0]!.status,
      'fulfilled',
      String((results[0] as any).reason?.cause ?? (results[0] as any).reason),
    );
    assert.equal(
      results[3]!.status,
      'fulfilled',
      String((results[3] as any).reason?.cause ?? (results[3] as any).reason),
    );
    for (const [i, r] of [results[1]!, results[2]!].entries()) {
      assert.equal(r.status, 'rejected');
      const reason = (r as PromiseRejectedResult).reason as ReservationBatchAborted & { cause: { code?: string } };
      assert.ok(reason instanceof ReservationBatchAborted);
      assert.equal(reason.cause.code, '23505');
      assert.equal(reason.rowRefused, i === 0, 'the clash itself was refused; the write behind it with it');
    }
    assert.equal(writer.generation, 0);
    assert.notEqual(generationOfA(), aBefore);
    assert.equal(generationOfB(), bBefore);
    assert.deepEqual(await totals(a.id), inEveryWindow('1000', 1));
    assert.deepEqual(await totals(b.id), inEveryWindow('200', 2));
    assert.equal(
      Number((await t.db.knex('audit_events').where({ chain_key: a.id }).max('seq as s'))[0]!.s),
      first.head.seq,
    );
    await assertChainsHold(a.id, b.id);
  });

  it('a statement that fails for anything but its rows writes nothing, and refuses every write queued behind it', async () => {
    const a = await wallet();
    const b = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    const a1 = reservation(a, a.head, 1000n);
    await writer.write(a1.write);
    // The writer's connection is gone: the statement fails, nothing in it or behind it is written, and the
    // generation of every wallet moves on (a write decided on one of them may be anywhere in the queue).
    await writer.close();
    const a2 = reservation(a, a1.head, 1000n);
    const b1 = reservation(b, b.head, 100n);
    const a3 = reservation(a, a2.head, 1000n);
    const results = await Promise.allSettled([writer.write(a2.write), writer.write(b1.write), writer.write(a3.write)]);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.ok((r as PromiseRejectedResult).reason instanceof ReservationBatchAborted);
      assert.equal(((r as PromiseRejectedResult).reason as ReservationBatchAborted).rowRefused, false);
    }
    assert.equal(writer.generation, 1);
    assert.equal(writer.generationOf(walletLockKey(b.id).toString()), 1);
    assert.deepEqual(await totals(a.id), inEveryWindow('1000', 1));
    assert.deepEqual(await totals(b.id), {});
  });

  it("a row PostgreSQL refuses for its values (SQLSTATE 22) fails alone: the other wallets' writes of its statement commit, its wallet's later writes are refused", async () => {
    const [a, b, c] = [await wallet(), await wallet(), await wallet()];
    const batches: number[] = [];
    const isolated: Array<{ refused: number; committed: number }> = [];
    const writer = new ReservationWriter(t.db.knex, {
      onBatch: (n) => batches.push(n),
      onIsolated: (o) => isolated.push(o),
    });
    writers.push(writer);
    const generations = () => [a, b, c].map((w) => writer.generationOf(walletLockKey(w.id).toString()));
    const before = generations();

    const a0 = reservation(a, a.head, 1000n);
    const a1 = reservation(a, a0.head, 1000n);
    const b1 = reservation(b, b.head, 100n);
    b1.write.authorization!.resource = 'https://seller.example/a\u0000b'; // resource: text cannot hold NUL
    const b2 = reservation(b, b1.head, 100n); // decided on b1
    const c1 = reservation(c, c.head, 100n);
    const c2 = reservation(c, c1.head, 2n ** 63n); // amount_micro above bigint
    const c3 = reservation(c, c2.head, 100n); // decided on c2
    const a2 = reservation(a, a1.head, 1000n);
    const d1 = reservation(b, b.head, 100n);
    d1.write.authorization!.resource = 'https://seller.example/\ud800'; // a lone surrogate: not UTF-8 at all
    // a0 is sent alone; the others share the next statement, which fails, and are then sent apart.
    const results = await Promise.allSettled([a0, a1, b1, b2, c1, c2, c3, a2].map((r) => writer.write(r.write)));
    assert.deepEqual(batches, [1, 7]);
    const outcome = (r: PromiseSettledResult<void>) =>
      r.status === 'fulfilled'
        ? 'committed'
        : r.reason instanceof ReservationBatchAborted
          ? r.reason.rowRefused
            ? `refused ${(r.reason.cause as { code?: string }).code}`
            : 'behind'
          : String(r.reason);
    assert.deepEqual(results.map(outcome), [
      'committed',
      'committed',
      'refused 22P05',
      'behind',
      'committed',
      'refused 22003',
      'behind',
      'committed',
    ]);
    assert.deepEqual(isolated, [{ refused: 2, committed: 3 }]);
    assert.equal(writer.generation, 0, 'no statement failed for anything but its own rows');
    const after = generations();
    assert.equal(after[0], before[0], "a's remembered state is still good");
    assert.notEqual(after[1], before[1]);
    assert.notEqual(after[2], before[2]);
    assert.deepEqual(await totals(a.id), inEveryWindow('3000', 3));
    assert.deepEqual(await totals(b.id), {});
    assert.deepEqual(await totals(c.id), inEveryWindow('100', 1));
    for (const w of [a, b, c]) assert.equal((await verifyAuditChain(t.db.knex, w.id)).ok, true);

    // Alone in its statement, a bad row is refused the same way; the writer goes on.
    const [d] = await Promise.allSettled([writer.write(d1.write)]);
    assert.equal(outcome(d!).startsWith('refused 22'), true, outcome(d!));
    assert.equal(writer.generation, 0);
    await writer.write(reservation(b, b.head, 100n).write);
    assert.deepEqual(await totals(b.id), inEveryWindow('100', 1));
  });

  it("a place kept for a decision being signed holds back its wallet's later writes, not other wallets'; filled signed, it lands signed", async () => {
    const { a, b, batches, writer } = await twoWalletsAndWriter();
    const a1 = reservation(a, a.head, 1000n);
    const a2 = reservation(a, a1.head, 2000n);
    const b1 = reservation(b, b.head, 500n);
    const place = writer.place(a1.write.lockKey);
    let a2Done = false;
    const a2Written = writer.write(a2.write).then(() => (a2Done = true));
    await writer.write(b1.write);
    assert.deepEqual(batches, [1], "only b's write was sent");
    assert.equal(a2Done, false, "a's later write waits behind the empty place");
    assert.equal((await t.db.knex('authorizations').where({ wallet_id: a.id })).length, 0);

    const signature = `0x${'ef'.repeat(65)}`;
    place.fill(signedWrite(a1.write, { signature }, signature, AT));
    await Promise.all([place.committed, a2Written]);
    assert.deepEqual(batches, [1, 2], 'the place and the write behind it went out together, in chain order');
    const rows = await t.db.knex('authorizations').where({ wallet_id: a.id }).orderBy('created_at');
    const byId = new Map(rows.map((r: any) => [r.id, r]));
    assert.equal(byId.get(a1.write.authorization!.id).status, 'signed');
    assert.equal(byId.get(a1.write.authorization!.id).signature, signature);
    assert.deepEqual(byId.get(a1.write.authorization!.id).response, { signature });
    assert.ok(byId.get(a1.write.authorization!.id).signed_at instanceof Date);
    assert.equal(byId.get(a2.write.authorization!.id).status, 'reserved');
    assert.equal((await verifyAuditChain(t.db.knex, a.id)).ok, true);

    // A place refused while still empty (a statement ahead of it failed): `committed` rejects, and its
    // later fill writes nothing.
    const clash = reservation(b, b1.head, 10n, a1.write.authorization!.nonce); // b's nonces are its own: collide on the id instead
    clash.write.authorization!.id = a1.write.authorization!.id;
    const failing = writer.write(clash.write);
    const empty = writer.place(b1.write.lockKey);
    const [f, e] = await Promise.allSettled([failing, empty.committed]);
    assert.equal(f.status, 'rejected');
    assert.equal(e.status, 'rejected');
    assert.ok((e as PromiseRejectedResult).reason instanceof ReservationBatchAborted);
    const late = reservation(b, b1.head, 20n);
    empty.fill(late.write);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await t.db.knex('authorizations').where({ id: late.write.authorization!.id })).length, 0);
    assert.deepEqual(await totals(b.id), inEveryWindow('500', 1));
  });

  it('signatures: each caller hears what its row holds — one stored signature when two records of a row share a statement', async () => {
    const w = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    const batches: number[] = [];
    const recorder = new SignatureRecorder<{ signature: string }>(t.db.knex, { onBatch: (n) => batches.push(n) });
    writers.push(writer, recorder);
    const r1 = reservation(w, w.head, 100n);
    const r2 = reservation(w, r1.head, 100n);
    const r3 = reservation(w, r2.head, 100n);
    for (const r of [r1, r2, r3]) await writer.write(r.write);
    const id = (r: { write: DecisionWrite }) => r.write.authorization!.id;
    await t.db
      .knex('authorizations')
      .where({ id: id(r3) })
      .update({ status: 'released' });
    const sig = (n: number) => `0x${n.toString(16).padStart(2, '0').repeat(65)}`;
    const first = recorder.record(id(r1), sig(1), { signature: sig(1) }, AT); // sent alone
    // Queued together: two records of r2 (concurrent retries of one Idempotency-Key), r3 (released), an unknown id.
    const [a, b, c, d] = await Promise.all([
      recorder.record(id(r2), sig(2), { signature: sig(2) }, AT),
      recorder.record(id(r2), sig(3), { signature: sig(3) }, AT),
      recorder.record(id(r3), sig(4), { signature: sig(4) }, AT),
      recorder.record('auth_unknown', sig(5), { signature: sig(5) }, AT),
    ]);
    assert.deepEqual(batches, [1, 4]);
    assert.deepEqual(await first, { status: 'signed', response: { signature: sig(1) } });
    const stored = (await storedSignature(id(r2))) as string;
    assert.ok([sig(2), sig(3)].includes(stored));
    assert.deepEqual(a, { status: 'signed', response: { signature: stored } }, 'both callers get the stored signature');
    assert.deepEqual(b, a);
    assert.equal(c!.status, 'released', 'a released row takes no signature');
    assert.equal(d, undefined);
    assert.equal(await storedSignature(id(r3)), null);
  });

  it('signatures: a record whose connection is cut while its statement runs is sent once more on a new connection; a statement PostgreSQL refused is not', async () => {
    const w = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    let opened = 0;
    const recorder = new SignatureRecorder<{ signature: string }>(t.db.knex, { onConnectionOpened: () => opened++ });
    writers.push(writer, recorder);
    const r1 = reservation(w, w.head, 100n);
    const r2 = reservation(w, r1.head, 100n);
    for (const r of [r1, r2]) await writer.write(r.write);
    const id = (r: { write: DecisionWrite }) => r.write.authorization!.id;
    const sig = (n: number) => `0x${n.toString(16).padStart(2, '0').repeat(65)}`;
    assert.deepEqual(await recorder.record(id(r1), sig(1), { signature: sig(1) }, AT), {
      status: 'signed',
      response: { signature: sig(1) },
    });
    assert.equal(opened, 1);
    // Hold r2's row so that the record statement waits inside PostgreSQL, then end that session under it
    // (an administrator, a failover); the row is let go once the session is gone.
    const holder = await t.db.knex.transaction();
    try {
      await holder('authorizations')
        .where({ id: id(r2) })
        .forUpdate()
        .select('id');
      const recorded = recorder.record(id(r2), sig(2), { signature: sig(2) }, AT);
      let cut = 0;
      for (let i = 0; i < 200 && cut === 0; i++) {
        const r = await t.db.knex.raw(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE authorizations a SET status%'",
        );
        cut = r.rows[0].n;
        if (cut === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(cut, 1, 'the record statement was waiting, and its session was ended');
      await new Promise((resolve) => setTimeout(resolve, 50));
      await holder.commit();
      assert.deepEqual(await recorded, { status: 'signed', response: { signature: sig(2) } });
    } finally {
      if (!holder.isCompleted()) await holder.rollback();
    }
    assert.equal(opened, 2, 'sent again on a new connection');
    assert.equal(await storedSignature(id(r2)), sig(2));
    // A value PostgreSQL refuses (not a timestamp) fails the record at once: no second attempt, same connection.
    await assert.rejects(
      recorder.record(id(r2), sig(3), { signature: sig(3) }, 'not a time' as unknown as Date),
      /timestamp|time/i,
    );
    assert.equal(opened, 2);
  });

  it('signatures: the record statement finds its rows by primary key under its generic plan, on thousands of rows', async () => {
    const w = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    writers.push(writer);
    const r = reservation(w, w.head, 100n);
    await writer.write(r.write);
    await t.db.knex.raw(
      `INSERT INTO authorizations
       SELECT (jsonb_populate_record(NULL::authorizations, to_jsonb(a) || jsonb_build_object('id', 'auth_bulk_' || g, 'nonce', '0x' || lpad(to_hex(g), 64, '0')))).*
         FROM authorizations a, generate_series(1, 5000) g WHERE a.id = ?`,
      [r.write.authorization!.id],
    );
    await t.db.knex.raw('ANALYZE authorizations');
    // What a prepared statement runs once PostgreSQL settles on its generic plan (no parameter values known).
    let n = 0;
    const sql = SIGNATURE_RECORD_SQL.replace(/\?/g, () => `$${++n}`);
    const plan = (await t.db.knex.raw(`EXPLAIN (GENERIC_PLAN) ${sql}`)).rows
      .map((row: Record<string, string>) => row['QUERY PLAN'])
      .join('\n');
    assert.match(plan, /Index Scan (using|on) authorizations_pkey/, plan);
    assert.doesNotMatch(plan, /Seq Scan on authorizations/, plan);
  });

  it('text and JSON values arrive exactly as sent: quotes, backslashes, newlines, any Unicode', async () => {
    const w = await wallet();
    const writer = new ReservationWriter(t.db.knex);
    const recorder = new SignatureRecorder<Record<string, unknown>>(t.db.knex);
    writers.push(writer, recorder);
    const odd = 'https://seller.example/a?q="x"&b=\\path\nline ü€😀 \u2028';
    const r = reservation(w, w.head, 100n);
    r.write.authorization!.resource = odd; // resource
    await writer.write(r.write);
    const id = r.write.authorization!.id;
    const response = {
      signature: `0x${'ab'.repeat(65)}`,
      resource: odd,
      nested: { list: [1, 'two', null, { three: '"3"' }] },
    };
    assert.deepEqual(await recorder.record(id, response.signature, response, AT), { status: 'signed', response });
    const row = await t.db.knex('authorizations').where({ id }).first('resource', 'response', 'signature', 'signed_at');
    assert.equal(row.resource, odd);
    assert.deepEqual(row.response, response);
    assert.equal(row.signature, response.signature);
    assert.equal(new Date(row.signed_at).toISOString(), AT.toISOString());
    const audit = await t.db.knex('audit_events').where({ chain_key: w.id }).orderBy('seq', 'desc').first('payload');
    assert.deepEqual(audit.payload, { authorization_id: id });
    assert.deepEqual(await verifyAuditChain(t.db.knex, w.id), { ok: true, chains: 1, rows: 2 });
  });
});

/**
 * The audit ledger's verification reads the ledger in bounded pages: a ledger longer than one page verifies
 * whole, the first broken row is named wherever it lies (inside a page, on a page's edge, at a chain's start),
 * and no query returns more than a page. Heads recorded by one run anchor the next: a chain rewritten with
 * recomputed hashes, cut short or gone is caught, through the function and through `audit:verify`. A row is
 * held to what is stored, not to what the driver reads back: an edit that parses to the same value (a
 * `__proto__` key, a number a double does not hold, created_at moved below the millisecond) is a
 * `hash_mismatch` in every mode, and rows the service writes, whatever their values, still verify.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { appendAuditEvent, verifyAuditChain, type ChainHead } from '../../../src/api/audit/audit-ledger.js';
import { verifyAuditSince } from '../../../src/api/audit/verify-audit-since.js';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';

describe('audit ledger verification in pages', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));
  // TRUNCATE fires no row trigger: each test starts from an empty ledger.
  beforeEach(() => db.knex.raw('TRUNCATE audit_events'));

  /** Three chains of 4, 5 and 3 rows (12 in all), appended interleaved as a running service would. */
  async function seed(): Promise<void> {
    const lengths: Record<string, number> = { wal_a: 4, wal_b: 5, wal_c: 3 };
    for (let round = 0; round < 5; round++) {
      for (const [chainKey, length] of Object.entries(lengths)) {
        if (round >= length) continue;
        await append(chainKey, 'payment.signed', { round });
      }
    }
  }

  /** Appends one event by the agent to the chain `chainKey`, in its own transaction. */
  const append = (chainKey: string, eventType: string, payload: Record<string, unknown>) =>
    db.knex.transaction((trx) => appendAuditEvent(trx, { chainKey, eventType, actor: 'agent', payload }));

  /** Runs `change` with the append-only trigger off, as only someone who owns the database could. */
  async function tamper(change: () => Promise<unknown>): Promise<void> {
    await db.knex.raw('ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update');
    try {
      await change();
    } finally {
      await db.knex.raw('ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update');
    }
  }

  const rowOf = async (chainKey: string, seq: number) =>
    (await db.knex('audit_events').where({ chain_key: chainKey, seq }).first('id')) as { id: string };

  it('verifies a ledger longer than one page, in every page size, without any query returning more than a page', async () => {
    await seed();
    for (const batchRows of [1, 2, 5, 12, 13, 5_000]) {
      const largest: number[] = [];
      const onResponse = (response: unknown) => {
        if (Array.isArray(response)) largest.push(response.length);
      };
      db.knex.on('query-response', onResponse);
      try {
        assert.deepEqual(
          await verifyAuditChain(db.knex, undefined, { batchRows }),
          { chains: 3, rows: 12, ok: true },
          `pages of ${batchRows}`,
        );
      } finally {
        db.knex.off('query-response', onResponse);
      }
      assert.ok(
        Math.max(...largest) <= batchRows,
        `pages of ${batchRows}: at most ${batchRows} rows per query, got ${Math.max(...largest)}`,
      );
      assert.ok(largest.length >= Math.ceil(12 / batchRows), `pages of ${batchRows}: ${largest.length} queries`);
    }
    assert.deepEqual(await verifyAuditChain(db.knex, 'wal_b', { batchRows: 2 }), { chains: 1, rows: 5, ok: true });
  });

  it('names the first tampered row, also when it lies in a later page', async () => {
    await seed();
    const target = await rowOf('wal_c', 2);
    await tamper(() => db.knex('audit_events').where({ id: target.id }).update({ actor: 'mallory' }));
    for (const batchRows of [2, 3, 5_000]) {
      const result = await verifyAuditChain(db.knex, undefined, { batchRows });
      assert.equal(result.ok, false);
      assert.deepEqual(result.firstBroken, {
        id: String(target.id),
        chain_key: 'wal_c',
        seq: 2,
        reason: 'hash_mismatch',
      });
      // wal_a (4) and wal_b (5) were read whole, then wal_c up to its second row.
      assert.equal(result.rows, 11);
      assert.equal(result.chains, 3);
    }
    assert.equal(
      (await verifyAuditChain(db.knex, 'wal_a', { batchRows: 2 })).ok,
      true,
      'an intact chain still verifies alone',
    );
  });

  it('names a deleted row as a gap, on a page edge and at the start of a chain', async () => {
    await seed();
    // wal_b's first row is gone: its chain starts at seq 2.
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_b', seq: 1 }).delete());
    const next = await rowOf('wal_b', 2);
    const result = await verifyAuditChain(db.knex, undefined, { batchRows: 3 });
    assert.deepEqual(result.firstBroken, { id: String(next.id), chain_key: 'wal_b', seq: 2, reason: 'sequence_gap' });
    assert.equal(result.rows, 5);

    // wal_a's third row is gone: with pages of 2 rows, its fourth opens the second page.
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_a', seq: 3 }).delete());
    const after = await rowOf('wal_a', 4);
    const first = await verifyAuditChain(db.knex, undefined, { batchRows: 2 });
    assert.deepEqual(
      first.firstBroken,
      { id: String(after.id), chain_key: 'wal_a', seq: 4, reason: 'sequence_gap' },
      'the earlier break in (chain, seq) order is the one named',
    );
  });

  it('names a row whose link to the previous one was rewritten', async () => {
    await seed();
    const target = await rowOf('wal_b', 3);
    await tamper(() =>
      db
        .knex('audit_events')
        .where({ id: target.id })
        .update({ prev_hash: 'f'.repeat(64) }),
    );
    const result = await verifyAuditChain(db.knex, 'wal_b', { batchRows: 2 });
    assert.deepEqual(result.firstBroken, {
      id: String(target.id),
      chain_key: 'wal_b',
      seq: 3,
      reason: 'prev_hash_mismatch',
    });
  });

  /** Every chain's head, as a verification that held reports them. */
  async function heads(): Promise<ChainHead[]> {
    const out: ChainHead[] = [];
    assert.equal((await verifyAuditChain(db.knex, undefined, { batchRows: 2, onHead: (h) => out.push(h) })).ok, true);
    return out;
  }
  /** Seeds the three chains and returns the heads a verification of them reports. */
  async function seedAndRecordHeads(): Promise<ChainHead[]> {
    await seed();
    return heads();
  }
  const anchorsOf = (list: ChainHead[]) => new Map(list.map((h) => [h.chain_key, { seq: h.seq, hash: h.hash }]));
  /** Whether the chain `chainKey`, verified alone against the heads `recorded`, holds. */
  const holdsAlone = async (chainKey: string, recorded: ChainHead[]) =>
    (await verifyAuditChain(db.knex, chainKey, { anchors: anchorsOf(recorded) })).ok;

  it('reports every chain head once the chain held, and anchors from them hold while the chains only grow', async () => {
    const recorded = await seedAndRecordHeads();
    assert.deepEqual(
      recorded.map((h) => [h.chain_key, h.seq]),
      [
        ['wal_a', 4],
        ['wal_b', 5],
        ['wal_c', 3],
      ],
    );
    const stored = await db.knex('audit_events').where({ chain_key: 'wal_b', seq: 5 }).first('hash');
    assert.equal(recorded[1]!.hash, stored.hash);
    await append('wal_a', 'payment.signed', { later: true });
    await append('wal_d', 'wallet.created', {});
    assert.deepEqual(await verifyAuditChain(db.knex, undefined, { batchRows: 2, anchors: anchorsOf(recorded) }), {
      chains: 4,
      rows: 14,
      ok: true,
    });
    assert.equal(await holdsAlone('wal_b', recorded), true, 'one chain against its own anchor');
  });

  it('catches through its anchor a chain rewritten with every hash recomputed, which holds on its own', async () => {
    const recorded = await seedAndRecordHeads();
    // Someone who owns the database replaces wal_b's history with a consistent one of their own.
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_b' }).delete());
    for (let i = 0; i < 5; i++) await append('wal_b', 'payment.signed', { forged: i });
    assert.equal((await verifyAuditChain(db.knex)).ok, true, 'without anchors the forged chain holds');
    const forgedHead = await rowOf('wal_b', 5);
    const result = await verifyAuditChain(db.knex, undefined, { anchors: anchorsOf(recorded) });
    assert.deepEqual(result.firstBroken, {
      id: String(forgedHead.id),
      chain_key: 'wal_b',
      seq: 5,
      reason: 'anchor_mismatch',
    });
  });

  it('catches a chain cut short and a chain gone, which no link shows', async () => {
    const recorded = await seedAndRecordHeads();
    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_c', seq: 3 }).delete());
    assert.equal((await verifyAuditChain(db.knex)).ok, true, 'without anchors the shorter chain holds');
    assert.deepEqual(
      (await verifyAuditChain(db.knex, undefined, { batchRows: 2, anchors: anchorsOf(recorded) })).firstBroken,
      { chain_key: 'wal_c', seq: 3, reason: 'anchor_missing' },
    );

    await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_a' }).delete());
    const gone = await verifyAuditChain(db.knex, undefined, {
      anchors: anchorsOf(recorded.filter((h) => h.chain_key !== 'wal_c')),
    });
    assert.deepEqual(gone.firstBroken, { chain_key: 'wal_a', seq: 4, reason: 'anchor_missing' });
    assert.deepEqual(
      (await verifyAuditChain(db.knex, 'wal_a', { anchors: anchorsOf(recorded) })).firstBroken,
      { chain_key: 'wal_a', seq: 4, reason: 'anchor_missing' },
      'also when that chain is named',
    );
    assert.equal(
      await holdsAlone('wal_b', recorded),
      true,
      'another chain named alone is not held to the others anchors',
    );
  });

  it('since its heads: reads each anchored chain from its anchored row on and other chains from their start, and names a break after an anchor', async () => {
    const recorded = await seedAndRecordHeads();
    for (let i = 0; i < 2; i++) await append('wal_a', 'payment.signed', { later: i });
    await append('wal_d', 'wallet.created', {});
    for (const batchRows of [1, 2, 5_000]) {
      const next: ChainHead[] = [];
      // wal_a: its anchored row and 2 new ones; wal_b and wal_c: their anchored rows; wal_d: its only row.
      assert.deepEqual(
        await verifyAuditSince(db.knex, anchorsOf(recorded), { batchRows, onHead: (h) => next.push(h) }),
        { chains: 4, rows: 6, ok: true },
        `pages of ${batchRows}`,
      );
      assert.deepEqual(
        next.map((h) => [h.chain_key, h.seq]),
        [
          ['wal_a', 6],
          ['wal_b', 5],
          ['wal_c', 3],
          ['wal_d', 1],
        ],
      );
    }
    assert.deepEqual(await verifyAuditSince(db.knex, anchorsOf(recorded), { chainKey: 'wal_b' }), {
      chains: 1,
      rows: 1,
      ok: true,
    });
    const later = await rowOf('wal_a', 6);
    await tamper(() => db.knex('audit_events').where({ id: later.id }).update({ actor: 'mallory' }));
    assert.deepEqual((await verifyAuditSince(db.knex, anchorsOf(recorded), { batchRows: 2 })).firstBroken, {
      id: String(later.id),
      chain_key: 'wal_a',
      seq: 6,
      reason: 'hash_mismatch',
    });
  });

  it('since its heads: catches the anchored row edited or forged and a chain cut short or gone; an edit before an anchor is for the full verification', async () => {
    const scenario = async (change: () => Promise<unknown>) => {
      await db.knex.raw('TRUNCATE audit_events');
      const recorded = await seedAndRecordHeads();
      await tamper(change);
      return {
        since: await verifyAuditSince(db.knex, anchorsOf(recorded), { batchRows: 2 }),
        full: await verifyAuditChain(db.knex, undefined, { anchors: anchorsOf(recorded) }),
      };
    };
    const edited = await scenario(() =>
      db.knex('audit_events').where({ chain_key: 'wal_b', seq: 5 }).update({ actor: 'mallory' }),
    );
    assert.deepEqual(
      [edited.since.firstBroken?.chain_key, edited.since.firstBroken?.seq, edited.since.firstBroken?.reason],
      ['wal_b', 5, 'hash_mismatch'],
    );

    const forged = await scenario(async () => {
      await db.knex('audit_events').where({ chain_key: 'wal_b' }).delete();
      for (let i = 0; i < 5; i++) await append('wal_b', 'payment.signed', { forged: i });
    });
    assert.deepEqual(
      [forged.since.firstBroken?.chain_key, forged.since.firstBroken?.seq, forged.since.firstBroken?.reason],
      ['wal_b', 5, 'anchor_mismatch'],
    );

    const relinked = await scenario(() =>
      db
        .knex('audit_events')
        .where({ chain_key: 'wal_b', seq: 5 })
        .update({ prev_hash: 'f'.repeat(64) }),
    );
    assert.equal(relinked.since.firstBroken?.reason, 'hash_mismatch', "the anchored row's link is part of its hash");

    const cut = await scenario(() =>
      db.knex('audit_events').where({ chain_key: 'wal_b' }).andWhere('seq', '>=', 4).delete(),
    );
    assert.deepEqual(
      cut.since.firstBroken,
      { chain_key: 'wal_b', seq: 5, reason: 'anchor_missing' },
      'named in its place, before wal_c is read',
    );
    assert.equal(cut.since.chains, 1);

    const anchoredRowGone = await scenario(async () => {
      await db.knex('audit_events').where({ chain_key: 'wal_c', seq: 3 }).delete();
      await append('wal_c', 'payment.signed', { replaced: true });
    });
    assert.deepEqual(
      [anchoredRowGone.since.firstBroken?.chain_key, anchoredRowGone.since.firstBroken?.reason],
      ['wal_c', 'anchor_mismatch'],
    );

    const gone = await scenario(() => db.knex('audit_events').where({ chain_key: 'wal_a' }).delete());
    assert.deepEqual(gone.since.firstBroken, { chain_key: 'wal_a', seq: 4, reason: 'anchor_missing' });

    const before = await scenario(() =>
      db.knex('audit_events').where({ chain_key: 'wal_b', seq: 2 }).update({ actor: 'mallory' }),
    );
    assert.equal(before.since.ok, true, 'nothing before an anchored head is read');
    assert.deepEqual(
      [before.full.firstBroken?.chain_key, before.full.firstBroken?.seq, before.full.firstBroken?.reason],
      ['wal_b', 2, 'hash_mismatch'],
    );
  });

  /**
   * Edits that leave the stored row reading back as the same JavaScript value, so a verifier that recomputes the
   * hash from the value parsed by the driver missed them: a `__proto__` key (JSON.parse makes it an own key,
   * an assignment to it sets a prototype), a number a double cannot hold (1e400 reads as Infinity, written as
   * null; 2.0000000000000001 reads as 2), created_at moved by less than the millisecond its hash spells.
   */
  const editsBelowTheValue: Array<[name: string, set: string]> = [
    ['a top-level __proto__ key', `payload = payload || '{"__proto__":{"to":"0xEVIL","amount_micro":"999999999"}}'`],
    [
      'a nested __proto__ key',
      `payload = jsonb_set(payload, '{nested}', '{"approved":false,"__proto__":{"approved":true,"by":"ceo"}}')`,
    ],
    ['a __proto__ key inside an array', `payload = jsonb_set(payload, '{list}', '[{"__proto__":{"x":1}}]')`],
    ['null turned into 1e400', `payload = jsonb_set(payload, '{reason}', '1e400')`],
    ['2 turned into 2.0000000000000001', `payload = jsonb_set(payload, '{n}', '2.0000000000000001')`],
    ['2 turned into 2.0', `payload = jsonb_set(payload, '{n}', '2.0')`],
    ['created_at moved by 900 µs', `created_at = created_at + interval '900 microseconds'`],
  ];

  it('names as hash_mismatch an edit the parsed row would hide, in full, anchored and since-heads verification', async () => {
    for (const [name, set] of editsBelowTheValue) {
      // After an anchored head (wal_a seq 5), and an anchored head itself (wal_b seq 5).
      for (const [chainKey, seq] of [
        ['wal_a', 5],
        ['wal_b', 5],
      ] as const) {
        await db.knex.raw('TRUNCATE audit_events');
        const recorded = await seedAndRecordHeads();
        const payload = {
          amount_micro: '1000',
          to: '0xabc',
          reason: null,
          n: 2,
          nested: { approved: false },
          list: [],
        };
        await append('wal_a', 'payment.signed', payload);
        assert.equal((await verifyAuditChain(db.knex, undefined, { anchors: anchorsOf(recorded) })).ok, true, name);
        const target = await rowOf(chainKey, seq);
        await tamper(() => db.knex.raw(`UPDATE audit_events SET ${set} WHERE id = ?`, [target.id]));
        const expected = { id: String(target.id), chain_key: chainKey, seq, reason: 'hash_mismatch' };
        const at = `${name}, ${chainKey} seq ${seq}`;
        assert.deepEqual((await verifyAuditChain(db.knex)).firstBroken, expected, `full: ${at}`);
        assert.deepEqual(
          (await verifyAuditChain(db.knex, undefined, { batchRows: 2, anchors: anchorsOf(recorded) })).firstBroken,
          expected,
          `anchored: ${at}`,
        );
        assert.deepEqual(
          (await verifyAuditSince(db.knex, anchorsOf(recorded), { batchRows: 2 })).firstBroken,
          expected,
          `since heads: ${at}`,
        );
      }
    }
  });

  it('verifies rows holding every hostile value and numbers of every size, as the service writes them', async () => {
    const hostile = JSON.parse(
      fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
    ) as Record<string, unknown>;
    // NUL and a lone surrogate have no jsonb form (the insert fails); a `__proto__` key is refused at write.
    const unstorable = (v: unknown) => /\\u0000|\\ud[89a-f]|__proto__/i.test(JSON.stringify(v));
    const values = Object.entries(hostile)
      .filter(([name]) => name !== 'about' && name !== 'notes')
      .flatMap(([, list]) => (Array.isArray(list) ? (list as unknown[]) : []))
      .filter((v) => !unstorable(v));
    assert.ok(values.length > 20, 'the hostile-input table was read');
    const numbers = [
      0,
      -0,
      1,
      -1,
      0.1,
      0.1 + 0.2,
      1.5,
      -2.5e-7,
      1e-7,
      1e-6,
      123e-20,
      5e-324,
      2.2250738585072014e-308,
      Number.MAX_SAFE_INTEGER,
      2 ** 53 + 2,
      1e21,
      1e21 + 65536,
      1.7976931348623157e308,
      -1.5e300,
      4.35,
      1 / 3,
    ];
    numbers.push(...fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { numRuns: 200, seed: 42 }));
    await db.knex.transaction(async (trx) => {
      for (const value of values)
        await appendAuditEvent(trx, { chainKey: 'wal_h', eventType: 'x', actor: 'agent', payload: { value } });
      for (const n of numbers)
        await appendAuditEvent(trx, { chainKey: 'wal_n', eventType: 'x', actor: 'agent', payload: { n, list: [n] } });
    });
    assert.deepEqual(await verifyAuditChain(db.knex), {
      chains: 2,
      rows: values.length + numbers.length,
      ok: true,
    });
  });

  it('audit:verify records heads with --heads-out only from a ledger that held, and checks them with --heads-in', async () => {
    await seed();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-heads-'));
    const run = (...args: string[]) => {
      try {
        const out = execFileSync(process.execPath, [...nodeArgsFor('src/api/audit/audit-cli.ts'), 'verify', ...args], {
          env: { ...process.env, DATABASE_URL: db.connectionString },
          stdio: 'pipe',
        });
        return { code: 0, out: JSON.parse(String(out)) as Record<string, unknown>, err: '' };
      } catch (err) {
        const e = err as { status: number; stdout: Buffer; stderr: Buffer };
        return {
          code: e.status,
          out: String(e.stdout) ? (JSON.parse(String(e.stdout)) as Record<string, unknown>) : {},
          err: String(e.stderr),
        };
      }
    };
    try {
      const file = path.join(dir, 'heads.jsonl');
      const first = run('--heads-out', file);
      assert.equal(first.code, 0, first.err);
      assert.equal(first.out.heads_written, 3);
      assert.deepEqual(
        fs
          .readFileSync(file, 'utf8')
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as ChainHead).chain_key),
        ['wal_a', 'wal_b', 'wal_c'],
      );
      assert.equal(run('--heads-in', file).out.anchors_checked, 3);
      const since = run('--heads-in', file, '--since-heads');
      assert.equal(since.code, 0, since.err);
      assert.deepEqual(
        [since.out.mode, since.out.rows, since.out.chains],
        ['since_heads', 3, 3],
        'one anchored row per chain read',
      );
      assert.equal(run('--since-heads').code, 2, '--since-heads needs --heads-in');

      await tamper(() => db.knex('audit_events').where({ chain_key: 'wal_c', seq: 3 }).delete());
      const second = path.join(dir, 'after.jsonl');
      const cut = run('--heads-in', file, '--heads-out', second);
      assert.equal(cut.code, 4);
      assert.deepEqual(cut.out.firstBroken, { chain_key: 'wal_c', seq: 3, reason: 'anchor_missing' });
      assert.deepEqual(
        fs.readdirSync(dir),
        ['heads.jsonl'],
        'no heads recorded from a broken ledger, no temporary file left',
      );

      fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"chain_key":"wal_a","seq":1,"hash":"00"}\n');
      const bad = run('--heads-in', path.join(dir, 'bad.jsonl'));
      assert.equal(bad.code, 2);
      assert.match(bad.err, /line 1 is not a chain head \(hash\)/);
      assert.equal(run('--heads-in', path.join(dir, 'missing.jsonl')).code, 2);
      assert.equal(run('--nope').code, 2);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

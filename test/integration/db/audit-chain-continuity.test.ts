/**
 * The database itself refuses an audit row that does not extend its chain (audit_events_extends_chain):
 * every writer — the pay path's shared statements, single appends, a hand-written INSERT — can only add row
 * `seq` naming row `seq − 1`'s hash. This is what makes a writer that remembers a lost chain head (a
 * reservation lost in a database crash, ADR 0007) fail and read again instead of leaving a gap.
 */
import assert from 'node:assert/strict';
import { computeAuditHash, GENESIS_HASH } from '../../../src/audit/audit-ledger.js';
import { useTestDatabase, type TestDatabase } from '../../support/test-database.js';

interface Row {
  chain_key: string;
  seq: number;
  event_type: string;
  actor: string;
  payload: string;
  prev_hash: string;
  hash: string;
  created_at: Date;
}

/** `count` rows of one chain, each naming the previous one's hash, starting after (seq, hash). */
function chainRows(chainKey: string, count: number, after: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH }): Row[] {
  const rows: Row[] = [];
  let prev = after;
  for (let i = 1; i <= count; i++) {
    const base = { chain_key: chainKey, seq: prev.seq + 1, event_type: 'test.event', actor: 'test', payload: { n: prev.seq + 1 }, prev_hash: prev.hash, created_at: new Date() };
    const hash = computeAuditHash(base);
    rows.push({ ...base, payload: JSON.stringify(base.payload), hash });
    prev = { seq: base.seq, hash };
  }
  return rows;
}

describe('audit chain continuity in the database (PostgreSQL)', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  useTestDatabase((d) => (db = d));

  const refused = async (rows: Row[]) => {
    const err = await db.knex('audit_events').insert(rows).then(
      () => undefined,
      (e: { code?: string; constraint?: string; message: string }) => e,
    );
    assert.ok(err, 'the insert is refused');
    assert.equal(err.code, '23514', err.message);
    assert.equal(err.constraint, 'audit_events_extends_chain');
  };
  const count = async (chainKey: string) => Number((await db.knex('audit_events').where({ chain_key: chainKey }).count({ n: '*' }))[0]!.n);

  it('takes a chain that starts at the genesis hash and names each previous hash, several rows per statement in any order', async () => {
    const rows = chainRows('c_ok', 5);
    await db.knex('audit_events').insert(rows.slice(0, 1));
    await db.knex('audit_events').insert([rows[3]!, rows[1]!, rows[2]!]);
    await db.knex('audit_events').insert(rows[4]!);
    assert.equal(await count('c_ok'), 5);
  });

  it('refuses a first row that does not start at the genesis hash', async () => {
    const [first] = chainRows('c_genesis', 1);
    await refused([{ ...first!, prev_hash: 'f'.repeat(64) }]);
    assert.equal(await count('c_genesis'), 0);
  });

  it('refuses a gap: a row whose previous row is not there (a lost head), and nothing of its statement is written', async () => {
    const rows = chainRows('c_gap', 4);
    await db.knex('audit_events').insert(rows.slice(0, 2));
    await refused([rows[3]!]);
    // One good row and one that skips: the statement writes neither.
    await refused([rows[2]!, chainRows('c_gap', 1, { seq: 4, hash: rows[3]!.hash })[0]!]);
    assert.equal(await count('c_gap'), 2);
  });

  it('refuses a fork: a row naming a hash its previous row does not have', async () => {
    const rows = chainRows('c_fork', 2);
    await db.knex('audit_events').insert(rows[0]!);
    await refused([{ ...rows[1]!, prev_hash: 'a'.repeat(64) }]);
    assert.equal(await count('c_fork'), 1);
  });
});

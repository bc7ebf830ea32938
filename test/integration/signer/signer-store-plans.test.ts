/**
 * The statements a payment costs the signer's store (signer/owner-policy/spend-statements.ts) touch only the rows
 * of the wallets they name: PostgreSQL's plan for each, custom (made for the values) and generic (made once for
 * any value: what a connection keeps running after its first five executions), on a store of 1,000 wallets,
 * 50,000 spends and 50,000 accepted policies, scans none of the store's tables whole. On a store of that size
 * PostgreSQL preferred hashing every wallet row to answer "does the store know this wallet" for the spends
 * recorded after release (measured: 1.28 ms of execution for ten spends, 0.65 ms without the scan), and to join
 * the state read's wallets to their rows. A generic plan is read with EXPLAIN (GENERIC_PLAN): EXPLAIN of a
 * statement sent with its parameters plans for their values, whatever plan_cache_mode says.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  commitDecidedSpends,
  insertLockedSpends,
  policyChangesSince,
  readSpendStates,
  readVelocityOn,
  readWallets,
  recordOpenSpends,
  type SpendRow,
} from '../../../signer/owner-policy/spend-statements.js';
import type { SignerDatabase } from '../../support/test-database.js';
import { migratedSignerStore } from './signer-test-helpers.js';

const WALLETS = 1_000;
const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const PAYEE = '0x209693bc6afc0c5328ba36faf03c514ef312287c';

/** The query a statement function sends, captured instead of run. */
async function captured(run: (db: pg.Pool) => Promise<unknown>) {
  let sent: pg.QueryConfig | undefined;
  const capture = {
    query: (q: pg.QueryConfig) => {
      sent = q;
      return Promise.resolve({ rows: [] });
    },
  };
  await run(capture as unknown as pg.Pool).catch(() => undefined);
  assert.ok(sent, 'a statement was sent');
  return sent;
}

/** Every table a plan reads whole (a sequential scan), from EXPLAIN's JSON. */
function wholeScans(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (n['Node Type'] === 'Seq Scan') found.push(String(n['Relation Name']));
    Object.values(n).forEach(walk);
  };
  walk(plan);
  return found;
}

describe("the signer store's statements (PostgreSQL plans)", function () {
  this.timeout(120_000);
  let store: SignerDatabase;
  let client: pg.Client;

  before(async () => {
    store = await migratedSignerStore();
    client = new pg.Client(store.connectionString);
    await client.connect();
    // Half the wallets hold a signed policy, as a store serving both kinds does.
    await client.query(
      `INSERT INTO signer_wallets (address, authority_kind, policy, policy_version, policy_hash, policy_issued_at, policy_signature)
       SELECT '0x' || lpad(to_hex(g), 40, '0'),
              CASE WHEN g % 2 = 0 THEN 'approver' END, CASE WHEN g % 2 = 0 THEN '{}'::jsonb END,
              CASE WHEN g % 2 = 0 THEN 1 END, CASE WHEN g % 2 = 0 THEN '0x' || repeat('ab', 32) END,
              CASE WHEN g % 2 = 0 THEN 1 END, CASE WHEN g % 2 = 0 THEN '0x' || repeat('cd', 65) END
         FROM generate_series(0, $1 - 1) g`,
      [WALLETS],
    );
    await client.query(
      `INSERT INTO signer_spend_counters (address) SELECT address FROM signer_wallets WHERE policy IS NOT NULL`,
    );
    await client.query(
      `INSERT INTO signer_spends (ref, address, amount, payee, signed_at)
       SELECT md5(g::text), '0x' || lpad(to_hex(g % $1), 40, '0'), 1000, $2, now() - make_interval(secs => g)
         FROM generate_series(1, 50000) g`,
      [WALLETS, PAYEE],
    );
    // The policies accepted so far (the read every signer process makes a few times a lease looks at the newest).
    await client.query(
      `INSERT INTO signer_policy_history
              (address, version, policy, policy_hash, issued_at, signature, authority_kind, authority_address)
       SELECT '0x' || lpad(to_hex((g % ($1 / 2)) * 2), 40, '0'), g, '{}'::jsonb, '0x' || repeat('ab', 32), 1,
              '0x' || repeat('cd', 65), 'approver', '0x' || repeat('ef', 20)
         FROM generate_series(1, 50000) g`,
      [WALLETS],
    );
    await client.query('ANALYZE');
  });
  after(async () => {
    await client?.end();
    await store?.drop();
  });

  const rows = (from: number): SpendRow[] =>
    Array.from({ length: 12 }, (_, k) => [
      (from + k).toString(16).padStart(32, '0'),
      address(from + 2 * k),
      '1000',
      PAYEE,
      new Date(),
    ]);
  const now = new Date();
  const statements: Array<[string, () => Promise<pg.QueryConfig>]> = [
    ['recordOpenSpends', () => captured((db) => recordOpenSpends(db, rows(1)))],
    ['insertLockedSpends', () => captured((db) => insertLockedSpends(db, rows(2)))],
    [
      'commitDecidedSpends',
      () =>
        captured((db) =>
          commitDecidedSpends(
            db,
            [0, 2, 4].map((i) => ({ address: address(i), version: 1, seq: '0' })),
            rows(0),
          ),
        ),
    ],
    ['readWallets', () => captured((db) => readWallets(db, [address(3), address(4)]))],
    ['policyChangesSince', () => captured((db) => policyChangesSince(db, '49990'))],
    [
      'readSpendStates',
      () =>
        captured((db) =>
          readSpendStates(
            db,
            [0, 2].map((i) => ({
              address: address(i),
              dayStart: now,
              weekStart: now,
              monthStart: now,
              velocityStart: now,
              since: new Date(now.getTime() - 86_400_000),
            })),
          ),
        ),
    ],
    [
      'readVelocityOn',
      () =>
        captured((db) =>
          readVelocityOn(
            db,
            [0, 2].map((i) => ({
              address: address(i),
              point: { lastKnownUs: (now.getTime() - 120_000) * 1000, knownAtLast: 1, count: 40 },
              velocityStart: new Date(now.getTime() - 60_000),
            })),
          ),
        ),
    ],
  ];

  it("keeps each statement's generic plan after its first executions, instead of planning it at every one", async () => {
    // PostgreSQL tries five custom plans on a connection, then keeps the generic one unless it costs more: a
    // statement whose generic plan reads a table whole never passes, and is planned again at every execution. The
    // statements of every batch of spends must pass (the state read, planned at every execution, cost about three
    // times the backend CPU it costs on its kept plan: docs/performance.md); the wallet read and the policy-change
    // read, one-table lookups, may be planned each time.
    const session = new pg.Client(store.connectionString);
    await session.connect();
    try {
      const perBatch = new Set([
        'recordOpenSpends',
        'insertLockedSpends',
        'commitDecidedSpends',
        'readSpendStates',
        'readVelocityOn',
      ]);
      const everyTime = statements.filter(([name]) => perBatch.has(name));
      for (const [, statement] of everyTime) {
        const q = await statement();
        for (let i = 0; i < 12; i++) {
          await session.query('BEGIN');
          await session.query(q);
          await session.query('ROLLBACK');
        }
      }
      const { rows: prepared } = await session.query<{ name: string; generic: number; custom: number }>(
        'SELECT name, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements',
      );
      assert.equal(prepared.length, everyTime.length);
      for (const p of prepared) assert.deepEqual([p.name, p.custom, p.generic], [p.name, 5, 7]);
    } finally {
      await session.end();
    }
  });

  /** The plan of `q` made for its values (EXPLAIN with the parameters). */
  async function customPlan(q: pg.QueryConfig): Promise<unknown> {
    const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(
      `EXPLAIN (FORMAT JSON) ${q.text}`,
      q.values as unknown[],
    );
    return rows[0]!['QUERY PLAN'];
  }

  /** The plan of `q` made for any values (EXPLAIN's GENERIC_PLAN: the statement's text, its parameters unknown). */
  async function genericPlan(q: pg.QueryConfig): Promise<unknown> {
    const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${q.text}`);
    return rows[0]!['QUERY PLAN'];
  }

  /** Whether a plan is generic: it names a parameter ($1, $6…) where a custom plan has its value. */
  const namesParameters = (plan: unknown) => /\$[1-9]/.test(JSON.stringify(plan));

  it('reads no table whole, custom plans', async () => {
    for (const [name, statement] of statements) {
      const plan = await customPlan(await statement());
      assert.deepEqual(wholeScans(plan), [], name);
    }
  });

  it('reads no table whole, generic plans', async () => {
    for (const [name, statement] of statements) {
      const plan = await genericPlan(await statement());
      assert.ok(namesParameters(plan), `${name}: the plan explained is the generic one`);
      assert.deepEqual(wholeScans(plan), [], name);
    }
  });
});

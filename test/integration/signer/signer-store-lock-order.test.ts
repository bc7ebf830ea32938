/**
 * The signer store's row locks are taken in one order (signer/owner-policy/spend-statements.ts): a wallet's spend
 * counter before its row. A commit of spends decided on a snapshot holds the counter and then, inserting the
 * spends, a share of the wallet row (the spends' foreign key); the locked path and the storing of a policy, which
 * lock the wallet row for update, must not hold it while they wait for the counter, or the two deadlock and
 * PostgreSQL aborts one — a payment refused as `policy_store_unavailable`, or an owner's policy not stored, with
 * nothing wrong but timing. Driven here for the locked path, with the store's own statements on its schema, the
 * interleaving forced by a third session's lock on the counter.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import type { StoredPolicy } from '../../../signer/owner-policy/owner-policy-store.js';
import {
  commitDecidedSpends,
  insertLockedSpends,
  lockWallets,
  readSpendStates,
  type SpendRow,
} from '../../../signer/owner-policy/spend-statements.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { signerPolicyStore } from './signer-test-helpers.js';

const PAYEE = '0x209693bc6afc0c5328ba36faf03c514ef312287c';
const APPROVER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
const WALLET = `0x${'1'.padStart(40, '0')}`;

const policy: StoredPolicy = {
  policy: { daily_cap_usd: '1' } as StoredPolicy['policy'],
  version: 1,
  policyHash: `0x${'ab'.repeat(32)}`,
  issuedAt: 1_700_000_001,
  signature: `0x${'cd'.repeat(65)}`,
};

const spend = (n: number): SpendRow => [n.toString(16).padStart(32, '0'), WALLET, '1000', PAYEE, new Date()];

/** Whether session `client` is waiting for a lock (its backend, by pid, as pg_stat_activity tells). */
async function waitingForLock(observer: pg.Client, pid: number): Promise<boolean> {
  const { rows } = await observer.query<{ wait: string | null }>(
    'SELECT wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1',
    [pid],
  );
  return rows[0]?.wait === 'Lock';
}

async function untilWaiting(observer: pg.Client, pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await waitingForLock(observer, pid)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`backend ${pid} never waited for a lock`);
}

describe("the signer store's lock order (a counter before its wallet's row)", function () {
  this.timeout(60_000);
  let store: SignerDatabase;
  const clients: pg.Client[] = [];
  const pools: pg.Pool[] = [];
  const connect = async () => {
    const client = new pg.Client(store.connectionString);
    await client.connect();
    clients.push(client);
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return { client, pid: rows[0]!.pid };
  };

  beforeEach(async () => {
    store = await createSignerDatabase();
    const policies = signerPolicyStore(store.connectionString);
    try {
      await policies.prepare();
      await policies.setPolicy(WALLET, () => ({
        authority: { kind: 'approver', address: null },
        policy,
        signedBy: APPROVER,
      }));
    } finally {
      await policies.close();
    }
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
    await Promise.all(pools.splice(0).map((p) => p.end().catch(() => undefined)));
    await store?.drop();
  });

  it('the locked path and a snapshot commit of one wallet both finish', async () => {
    const observer = (await connect()).client;
    const now = new Date();
    const query = { address: WALLET, dayStart: now, weekStart: now, monthStart: now, velocityStart: now, since: now };
    const mark = (await readSpendStates(observer, [query])).get(WALLET)!.mark;
    // A third session shares the counter: a commit's lock on it (no key update) may pass, an update lock waits.
    const holder = (await connect()).client;
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM signer_spend_counters WHERE address = $1 FOR KEY SHARE', [WALLET]);

    // The locked path, as the store runs it: a pooled connection's transaction.
    const pool = new pg.Pool({ connectionString: store.connectionString, max: 1 });
    pools.push(pool);
    const locked = await pool.connect();
    const { rows: me } = await locked.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await locked.query('BEGIN');
    const lockedPath = lockWallets(locked, [WALLET]).then(async () => {
      await insertLockedSpends(locked, [spend(1)]);
      await locked.query('COMMIT');
      locked.release();
    });
    lockedPath.catch(() => locked.release(true));
    await untilWaiting(observer, me[0]!.pid);

    const committing = await connect();
    const commit = commitDecidedSpends(committing.client, [mark], [spend(2)]);
    commit.catch(() => undefined);
    // The commit either finishes at once or waits behind the locked path; give it the time to reach its wait.
    await new Promise((r) => setTimeout(r, 200));
    await holder.query('COMMIT');

    const outcomes = await Promise.allSettled([lockedPath, commit]);
    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as { code?: string }).code] : []));
    assert.deepEqual(failures, [], 'no session was aborted (40P01 is a deadlock)');
    const { rows } = await observer.query<{ n: string }>('SELECT count(*) AS n FROM signer_spends WHERE address = $1', [
      WALLET,
    ]);
    const committed = (await commit) as Map<string, string>;
    assert.equal(Number(rows[0]!.n), 1 + committed.size, "the locked path's spend, and the commit's if its check held");
  });
});

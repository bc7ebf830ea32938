/**
 * The statements a payment signature costs the signer's store (./pg-owner-policy-store.ts), as named (prepared)
 * statements: each connection parses them once, and PostgreSQL picks a custom or a generic plan for their array
 * parameters itself — neither reads a table whole (test/integration/signer/signer-store-plans.test.ts).
 *
 * `recordOpenSpends` is the whole cost for wallets without a signed policy: one statement, in its own implicit
 * transaction, that takes a KEY SHARE lock on each wallet row still without a policy (re-checked on the row's
 * newest version after any wait) and inserts those wallets' spends. The lock is what orders it with
 * `setPolicy` (whose FOR UPDATE waits for it): a policy signed while the statement runs is committed only after
 * these spends are, so the first decision under the policy counts them. A row that gained a policy is left out and
 * named, for the caller to decide (./signed-spends.ts). Whether the store knows a wallet is looked up by the
 * addresses named (the `known` CTE): written as a subquery on the table, PostgreSQL hashed every wallet row for it
 * on a store of 1,000 wallets, in both kinds of plan.
 *
 * For wallets with a signed policy: `readSpendStates` sums on one snapshot, with the row's policy version and
 * the wallet's spend counter (its own narrow row, `signer_spend_counters`, which a policy change raises too);
 * `commitDecidedSpends` records the spends decided on it only where the counter still holds, raising it;
 * `lockWallets` and `insertLockedSpends` are the locked fallback (which raises the counter too).
 *
 * Defends: a spend that escapes a later policy's windows (above); a decision committed on a state another
 * process changed since (the counter); bind values in logs (placeholders only).
 * Does not defend: what is decided — the caller's pure checks.
 */
import type pg from 'pg';
import type { WalletPolicy } from '../../policy/policy-schema.js';
import type { SpendState } from '../../policy/policy-types.js';
import {
  timestampFromUs,
  VELOCITY_TIMES_KEPT,
  type VelocityReadOn,
  type VelocityReadPoint,
  type VelocityWindow,
} from '../../policy/velocity-window.js';
import type { PolicyAuthority } from '../protocol/owner-policy-protocol.js';
import type { SpendQuery } from './owner-policy-store.js';

type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/**
 * A spend row to insert: its reference, the wallet and the payee as the store keeps them (0x lower-case, base58 as
 * spelled), raw amount, instant.
 */
export type SpendRow = [ref: string, address: string, amount: string, payee: string, at: Date];

export interface WalletRow {
  address: string;
  authority_kind: PolicyAuthority['kind'] | null;
  authority_address: string | null;
  policy: WalletPolicy | null;
  policy_version: string | null;
  policy_hash: string | null;
  policy_issued_at: string | null;
  policy_signature: string | null;
  /** Whether the row names the account it was recorded under (`WalletRecord.underAccount`). */
  under_account: boolean;
}

export const WALLET_COLUMNS =
  'address, authority_kind, authority_address, policy, policy_version, policy_hash, policy_issued_at, policy_signature, ' +
  'account_key_hash IS NOT NULL AS under_account';

const column = <T, V>(rows: readonly T[], pick: (row: T) => V) => rows.map(pick);

const SPEND_UNNEST = 'unnest($1::text[], $2::text[], $3::numeric[], $4::text[], $5::timestamptz[])';

function spendParams(rows: readonly SpendRow[]): unknown[] {
  return [0, 1, 2, 3, 4].map((i) => column(rows, (r) => r[i]));
}

/** What `recordOpenSpends` found of each wallet it was given. */
export type OpenOutcome = 'recorded' | 'has_policy' | 'unknown';

/**
 * Records the spends of the wallets (of `rows`) whose row has no signed policy, in one statement; returns, per
 * wallet address, whether its spends were recorded, its row has a policy (nothing recorded), or the store has
 * no row for it (nothing recorded).
 */
export async function recordOpenSpends(db: Queryable, rows: readonly SpendRow[]): Promise<Map<string, OpenOutcome>> {
  const addresses = [...new Set(rows.map((r) => r[1]))].sort();
  const { rows: found } = await db.query<{ address: string; open: boolean; known: boolean }>({
    name: 'signer_record_open_spends',
    text: `WITH open AS (
             SELECT address FROM signer_wallets
              WHERE address = ANY($6::text[]) AND policy IS NULL
              ORDER BY address FOR KEY SHARE
           ), recorded AS (
             INSERT INTO signer_spends (ref, address, amount, payee, signed_at)
             SELECT q.ref, q.address, q.amount, q.payee, q.signed_at
               FROM ${SPEND_UNNEST} AS q(ref, address, amount, payee, signed_at)
               JOIN open ON open.address = q.address
           ), known AS (
             SELECT address FROM signer_wallets WHERE address = ANY($6::text[])
           )
           SELECT a.address,
                  EXISTS (SELECT 1 FROM open WHERE open.address = a.address) AS open,
                  EXISTS (SELECT 1 FROM known WHERE known.address = a.address) AS known
             FROM unnest($6::text[]) AS a(address)`,
    values: [...spendParams(rows), addresses],
  });
  return new Map(
    found.map((r): [string, OpenOutcome] => [r.address, r.open ? 'recorded' : r.known ? 'has_policy' : 'unknown']),
  );
}

/**
 * Inside a transaction: the wallets' spend counters, then their rows, locked FOR UPDATE in address order. Every
 * statement and transaction of the store takes a wallet's counter before its row: a snapshot's commit locks the
 * counters and then, inserting the spends, shares the rows (the spends' foreign key), and `set_wallet_policy` locks
 * the counter before the row too — so none of them holds a row locked for update while it waits for a counter that
 * a commit holds while it waits for that row (test/integration/signer/signer-store-lock-order.test.ts).
 */
export async function lockWallets(client: pg.PoolClient, addresses: readonly string[]): Promise<WalletRow[]> {
  const sorted = [...addresses].sort();
  await client.query({
    name: 'signer_lock_spend_counters',
    text: `SELECT address FROM signer_spend_counters WHERE address = ANY($1::text[]) ORDER BY address FOR UPDATE`,
    values: [sorted],
  });
  const { rows } = await client.query<WalletRow>({
    name: 'signer_lock_wallets',
    text: `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = ANY($1::text[]) ORDER BY address FOR UPDATE`,
    values: [sorted],
  });
  return rows;
}

/**
 * Inserts the spends and raises each wallet's spend counter (a wallet that never had a policy has none), so that a
 * decision another process made on an earlier snapshot cannot commit: inside the transaction that holds the
 * wallets' rows and counters FOR UPDATE, or alone for spends recorded after release whose wallet gained a policy
 * meanwhile (./open-spend-leases.ts).
 */
export async function insertLockedSpends(db: Queryable, rows: readonly SpendRow[]): Promise<void> {
  await db.query({
    name: 'signer_insert_locked_spends',
    text: `WITH raised AS (
             UPDATE signer_spend_counters SET spend_seq = spend_seq + 1 WHERE address = ANY($6::text[])
           )
           INSERT INTO signer_spends (ref, address, amount, payee, signed_at) SELECT * FROM ${SPEND_UNNEST}`,
    values: [...spendParams(rows), [...new Set(rows.map((r) => r[1]))]],
  });
}

/**
 * What a decision read of a wallet on a snapshot: its policy version and spend counter then (`NO_COUNTER` when
 * the wallet has no counter row: no commit matches it, so its spends are decided under the locks).
 */
export interface ReadMark {
  address: string;
  version: number;
  seq: string;
}

/** The counter read for a wallet without a counter row: below any a row can hold, so no commit matches it. */
export const NO_COUNTER = '-1';

/**
 * Records spends decided on a snapshot (`readSpendStates` outside any transaction), in one statement, for each
 * wallet whose spend counter is still the one the decision read (a policy stored since raised it too): the counter
 * row is locked (in address order; the check is re-made on its newest version after any wait), raised, and the
 * wallet's spends inserted. Returns the wallets recorded, each with its counter now; the others' spends were not,
 * and must be decided again.
 */
export async function commitDecidedSpends(
  db: Queryable,
  marks: readonly ReadMark[],
  rows: readonly SpendRow[],
): Promise<Map<string, string>> {
  const { rows: raised } = await db.query<{ address: string; seq: string }>({
    name: 'signer_commit_decided_spends',
    text: `WITH e AS (
             SELECT * FROM unnest($6::text[], $7::bigint[]) AS e(address, seq)
           ), locked AS (
             SELECT c.address FROM signer_spend_counters c
               JOIN e ON e.address = c.address AND c.spend_seq = e.seq
              WHERE c.address = ANY($6::text[])
              ORDER BY c.address FOR NO KEY UPDATE OF c
           ), raised AS (
             UPDATE signer_spend_counters c SET spend_seq = c.spend_seq + 1 FROM locked
              WHERE c.address = locked.address RETURNING c.address, c.spend_seq
           ), recorded AS (
             INSERT INTO signer_spends (ref, address, amount, payee, signed_at)
             SELECT q.ref, q.address, q.amount, q.payee, q.signed_at
               FROM ${SPEND_UNNEST} AS q(ref, address, amount, payee, signed_at)
               JOIN raised ON raised.address = q.address
           )
           SELECT address, spend_seq::text AS seq FROM raised`,
    values: [...spendParams(rows), column(marks, (m) => m.address), column(marks, (m) => m.seq)],
  });
  return new Map(raised.map((r) => [r.address, r.seq]));
}

/** The wallets' rows, read on a snapshot (no lock). */
export async function readWallets(db: Queryable, addresses: readonly string[]): Promise<WalletRow[]> {
  const { rows } = await db.query<WalletRow>({
    name: 'signer_read_wallets',
    text: `SELECT ${WALLET_COLUMNS} FROM signer_wallets WHERE address = ANY($1::text[])`,
    values: [[...addresses]],
  });
  return rows;
}

export type StateQuery = SpendQuery & { since: Date };

/**
 * A wallet's spend state and, read with it on the same snapshot, its policy version and spend counter, and the
 * velocity window behind its count (policy/velocity-window.ts: empty without a velocity cap).
 */
export interface ReadState {
  state: SpendState;
  mark: ReadMark;
  window: VelocityWindow;
  /** A remembered window whose known times have all left: where to read it on before its count is exact. */
  readOn?: VelocityReadPoint;
}

/**
 * The times of the oldest spends in each queried wallet's velocity window (µs since the epoch, oldest first, as
 * `t.oldest_us`; spends given back excluded, as the count excludes them): a range of the index on (address, signed_at).
 */
const OLDEST_SPEND_TIMES = `(
               SELECT ARRAY(SELECT round(extract(epoch FROM s.signed_at) * 1000000)::float8 FROM signer_spends s
                             WHERE s.address = q.address AND s.signed_at > q.velocity_start AND s.amount > 0
                             ORDER BY s.signed_at LIMIT ${VELOCITY_TIMES_KEPT}) AS oldest_us
             ) t`;

/**
 * The spend state of each wallet (by its first entry's windows) with the wallet row's policy version and its spend
 * counter, by one statement on one snapshot (a wallet without a row: absent): the windows' sums from the per-day
 * rollups (`signer_spend_days`, at most 31 rows a wallet; their days are UTC days, as the windows' starts are),
 * the velocity count, the times of the window's oldest spends (VELOCITY_TIMES_KEPT of them, by the index on
 * (address, signed_at)) and the last payment from the spends themselves, over the velocity window and the look-back.
 * The wallet and counter rows are selected by the addresses named (`= ANY`, an index condition): joined to the
 * arrays alone, the statement's generic plan (which assumes a hundred wallets) hashed both tables whole, so
 * PostgreSQL never kept it and planned the statement again at every execution (docs/performance.md, "The signer
 * store's state read, planned once").
 */
export async function readSpendStates(db: Queryable, queries: readonly StateQuery[]): Promise<Map<string, ReadState>> {
  const { rows } = await db.query<{
    address: string;
    version: string | null;
    seq: string;
    day: string;
    week: string;
    month: string;
    recent: string;
    oldest_us: number[];
    last: Date | null;
  }>({
    name: 'signer_read_spend_states',
    text: `SELECT q.address, w.policy_version::text AS version, coalesce(c.spend_seq, ${NO_COUNTER})::text AS seq,
                  coalesce(d.day, 0)::text AS day, coalesce(d.week, 0)::text AS week,
                  coalesce(d.month, 0)::text AS month, v.recent::text AS recent, t.oldest_us, l.last
             FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[], $6::timestamptz[])
                    AS q(address, day_start, week_start, month_start, velocity_start, since)
             JOIN (SELECT address, policy_version FROM signer_wallets WHERE address = ANY($1::text[])) w
               ON w.address = q.address
             LEFT JOIN (SELECT address, spend_seq FROM signer_spend_counters WHERE address = ANY($1::text[])) c
               ON c.address = q.address
             CROSS JOIN LATERAL (
               SELECT sum(amount) FILTER (WHERE day >= (q.day_start AT TIME ZONE 'UTC')::date) AS day,
                      sum(amount) FILTER (WHERE day >= (q.week_start AT TIME ZONE 'UTC')::date) AS week,
                      sum(amount) FILTER (WHERE day >= (q.month_start AT TIME ZONE 'UTC')::date) AS month
                 FROM signer_spend_days
                WHERE address = q.address
                  AND day >= (least(q.day_start, q.week_start, q.month_start) AT TIME ZONE 'UTC')::date
             ) d
             CROSS JOIN LATERAL (
               SELECT count(*) AS recent FROM signer_spends s
                WHERE s.address = q.address AND s.signed_at > q.velocity_start AND s.amount > 0
             ) v
             CROSS JOIN LATERAL ${OLDEST_SPEND_TIMES}
             CROSS JOIN LATERAL (
               SELECT max(s.signed_at) AS last FROM signer_spends s
                WHERE s.address = q.address AND s.signed_at >= q.since AND s.amount > 0
             ) l`,
    values: [
      column(queries, (q) => q.address),
      column(queries, (q) => q.dayStart),
      column(queries, (q) => q.weekStart),
      column(queries, (q) => q.monthStart),
      column(queries, (q) => q.velocityStart ?? new Date(8.64e15)),
      column(queries, (q) => q.since),
    ],
  });
  return new Map(
    rows.map((r) => [
      r.address,
      {
        state: {
          dailySpentMicro: BigInt(r.day),
          weeklySpentMicro: BigInt(r.week),
          monthlySpentMicro: BigInt(r.month),
          recentCount: Number(r.recent),
          lastPaymentAt: r.last,
        },
        mark: { address: r.address, version: r.version === null ? 0 : Number(r.version), seq: r.seq },
        window: { count: Number(r.recent), oldest_us: r.oldest_us },
      },
    ]),
  );
}

/** A remembered velocity window to read on (policy/velocity-window.ts): its wallet, newest known time and start. */
export interface VelocityReadOnQuery {
  address: string;
  point: VelocityReadPoint;
  velocityStart: Date;
}

/**
 * For each remembered velocity window whose known spend times have all left it (./spend-state-cache.ts), what a
 * read on finds, in one statement: the oldest spend times still in the window and — only when they fill a list,
 * so that a wallet paid again after a quiet window does not count the spends that left — the spends from the
 * newest known time (inclusive: one at that very time may be unknown) to the window's start. Both are ranges of
 * the index on (address, signed_at), neither the whole window (the full read counts it: `readSpendStates`). The
 * wallets are selected by the addresses named, as `readSpendStates` selects them, so that PostgreSQL keeps the
 * statement's generic plan (test/integration/signer/signer-store-plans.test.ts).
 */
export async function readVelocityOn(
  db: Queryable,
  queries: readonly VelocityReadOnQuery[],
): Promise<Map<string, VelocityReadOn>> {
  const { rows } = await db.query<{ address: string; left: string; oldest_us: number[] }>({
    name: 'signer_read_velocity_on',
    text: `SELECT q.address, t.oldest_us,
                  CASE WHEN cardinality(t.oldest_us) = ${VELOCITY_TIMES_KEPT} THEN
                    (SELECT count(*) FROM signer_spends s
                      WHERE s.address = q.address AND s.amount > 0
                        AND s.signed_at >= q.last_known AND s.signed_at <= q.velocity_start)
                  ELSE 0 END::text AS left
             FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) AS q(address, last_known, velocity_start)
             JOIN (SELECT address FROM signer_wallets WHERE address = ANY($1::text[])) w ON w.address = q.address
             CROSS JOIN LATERAL ${OLDEST_SPEND_TIMES}`,
    values: [
      column(queries, (q) => q.address),
      column(queries, (q) => timestampFromUs(q.point.lastKnownUs)),
      column(queries, (q) => q.velocityStart),
    ],
  });
  return new Map(rows.map((r) => [r.address, { left: Number(r.left), oldest_us: r.oldest_us }]));
}

/**
 * The wallets whose policy was accepted after policy number `since`, and the newest number. Numbers follow commits
 * (each history row is numbered under the store generation's lock: ./pg-owner-policy-store.ts `storePolicy`), so no
 * policy numbered up to the newest is still to commit: reading from it next misses none.
 */
export async function policyChangesSince(db: Queryable, since: string): Promise<{ seq: string; addresses: string[] }> {
  const { rows } = await db.query<{ seq: string; addresses: string[] }>({
    name: 'signer_policy_changes_since',
    text: `SELECT coalesce(max(seq), $1::bigint)::text AS seq, coalesce(array_agg(DISTINCT address), '{}') AS addresses
             FROM signer_policy_history WHERE seq > $1::bigint`,
    values: [since],
  });
  return rows[0]!;
}

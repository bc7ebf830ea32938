/**
 * The pay path's fixed SQL: the wallet snapshot read (one statement, one consistent snapshot) and the audit
 * append of a locked transaction (decisions are written by ./decision-write.ts).
 *
 * Defends: a wallet's audit chain appended out of order — `appendWalletAudit` reads the chain's head and writes
 * the next row in the caller's wallet transaction, whose lock every writer of that chain holds (the unique
 * (chain_key, seq) refuses a row that raced past it all the same).
 */
import { buildAuditRow, type AuditEventInput, type AuditHead } from '../../audit/audit-ledger.js';
import type { WalletTx } from '../../db/wallet-transaction.js';
import { VELOCITY_TIMES_KEPT } from '../../../../policy/velocity-window.js';

/**
 * The times of a wallet's oldest payments in its velocity window (µs since the epoch, oldest first; released ones
 * excluded, as the window's count excludes them): a range of the (wallet_id, created_at) index.
 */
const oldestPaymentTimes = (wallet: string, start: string) =>
  `ARRAY(SELECT (extract(epoch FROM o.created_at) * 1000000)::bigint FROM authorizations o
          WHERE o.wallet_id = ${wallet} AND o.status <> 'released' AND o.created_at > ${start}
          ORDER BY o.created_at LIMIT ${VELOCITY_TIMES_KEPT})`;

// The last payment time (cooling-off) is the newest authorization of the wallet, released ones included
// (cooling-off errs on the safe side): read through the (wallet_id, created_at) index, so a payment does not
// rewrite the wallet row. `recent` (velocity cap only) is the rolling window's count and the times of its oldest
// payments (µs since the epoch, oldest first): policy/velocity-window.ts ages the count exactly as they leave it.
export const SNAPSHOT_SQL = `SELECT w.*, a.account_key_ref,
              (SELECT max(p.created_at) FROM authorizations p WHERE p.wallet_id = w.id) AS last_paid_at,
              (SELECT json_object_agg(t.window_kind, t.spent_micro::text) FROM wallet_spend_totals t
                WHERE t.wallet_id = w.id AND ((t.window_kind = 'day' AND t.window_start = ?::date)
                   OR (t.window_kind = 'week' AND t.window_start = ?::date) OR (t.window_kind = 'month' AND t.window_start = ?::date))) AS totals,
              CASE WHEN jsonb_exists(w.policy, 'velocity_cap') THEN
                (SELECT json_build_object(
                          'count', (SELECT count(*) FROM authorizations x WHERE x.wallet_id = w.id AND x.status <> 'released' AND x.created_at > v.start),
                          'oldest_us', ${oldestPaymentTimes('w.id', 'v.start')})
                   FROM (SELECT ?::timestamptz - make_interval(secs => (w.policy->'velocity_cap'->>'window_seconds')::int) AS start) v)
              END AS recent,
              (SELECT json_build_object('seq', e.seq, 'hash', e.hash) FROM audit_events e WHERE e.chain_key = w.id ORDER BY e.seq DESC LIMIT 1) AS audit_head,
              (SELECT json_build_object('id', i.id, 'status', i.status, 'request_hash', i.request_hash, 'response', i.response) FROM authorizations i
                WHERE i.wallet_id = w.id AND i.idempotency_key = ?) AS previous
         FROM wallets w JOIN treasury_accounts a ON a.id = w.account_id
        WHERE w.id = ?`;

// A remembered velocity window read on once its known times have all left (policy/velocity-window.ts
// `velocityReadPoint`): `oldest_us`, the oldest times still in the window, and — only when they fill a list, so
// that a wallet paid again after a quiet window does not count the payments that left — `left`, the payments
// from the last known time (inclusive: a payment at that very time may be unknown) to the window's start. Both
// are ranges of the (wallet_id, created_at) index, neither the whole window. Parameters: the last known time,
// the wallet, `now`, the window's seconds.
export const VELOCITY_READ_ON_SQL = `WITH p AS (SELECT ?::timestamptz AS last_known, ?::varchar AS wallet_id,
                          ?::timestamptz - make_interval(secs => ?::int) AS start),
            o AS MATERIALIZED (SELECT ${oldestPaymentTimes('p.wallet_id', 'p.start')} AS times FROM p)
       SELECT json_build_object(
                'left', CASE WHEN cardinality(o.times) = ${VELOCITY_TIMES_KEPT} THEN
                          (SELECT count(*) FROM authorizations x WHERE x.wallet_id = p.wallet_id AND x.status <> 'released'
                             AND x.created_at >= p.last_known AND x.created_at <= p.start) ELSE 0 END,
                'oldest_us', o.times) AS found
         FROM p, o`;

/** A UTC calendar date as YYYY-MM-DD, as the window-start parameters take it (window starts are 00:00 UTC). */
export const isoDate = (d: Date): string => d.toISOString().slice(0, 10);

const INSERT_AUDIT = `INSERT INTO audit_events (chain_key, seq, event_type, actor, payload, prev_hash, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
const AUDIT_HEAD = 'SELECT seq, hash FROM audit_events WHERE chain_key = ? ORDER BY seq DESC LIMIT 1';

/** audit_events values in INSERT_AUDIT's order. */
function auditValues(r: ReturnType<typeof buildAuditRow>): unknown[] {
  return [r.chain_key, r.seq, r.event_type, r.actor, r.payload, r.prev_hash, r.hash, r.created_at];
}

/** Appends `event` at the head of its wallet's chain, inside that wallet's locked transaction `tx`. */
export async function appendWalletAudit(tx: WalletTx, event: AuditEventInput): Promise<void> {
  const [head] = await tx.query<AuditHead>(AUDIT_HEAD, [event.chainKey], 'treasury_audit_head_v1');
  const row = buildAuditRow(head ?? null, event);
  await tx.query(INSERT_AUDIT, auditValues(row), 'treasury_audit_append_v1');
}

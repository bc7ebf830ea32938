/**
 * Gives the benchmark's database the history of a running service before it is measured: `copies` past
 * payments for each authorization already in it, spread over the previous `days` days (signed, long
 * expired, with nonces of their own), as many audit rows per audit row (in chains of their own, `history:…`),
 * and each wallet's past day, week and month spend windows.
 *
 * Why: a database minutes old has tables of a few thousand rows, and autovacuum analyzes a table each
 * time 10 % of it changed — at 400 payments/s that is every few seconds for authorizations (measured:
 * 0.17–0.25 s of CPU each time, a quarter of the two cores for a second), where a running service's
 * table of hundreds of thousands of rows is analyzed every few minutes. Indexes of a realistic size are
 * measured too.
 *
 * Limits: benchmark data, for a database that is thrown away. The history's audit rows are copies under
 * other chain keys, so their hashes do not verify (`npm run audit:verify` would name them); nothing in the
 * pay path reads them. Amounts and counts of the past spend windows are filler. Past payments are dated
 * before the current UTC day and past spend windows end before the current ones, so they count in no
 * current day, week or month window; a rolling velocity window longer than their age (up to 31 days) would
 * count them (the benchmark's wallets have a 60-s window).
 */
export interface QueryClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>>; rowCount: number | null }>;
}

export interface SeededHistory {
  authorizations: number;
  auditEvents: number;
  spendWindows: number;
}

export async function seedPaymentHistory(
  client: QueryClient,
  options: { copies: number; days: number },
): Promise<SeededHistory> {
  const { copies, days } = options;
  if (!Number.isInteger(copies) || copies < 1) throw new Error('copies must be a positive integer');
  if (!Number.isInteger(days) || days < 1) throw new Error('days must be a positive integer');
  // Copy g of a row is dated g/copies of `days` (plus one to two hours) before it, and never later than an
  // hour before the current UTC day, so no copy falls in a current window. OFFSET 0 keeps the random shift
  // one value per copy (an inlined subquery would draw it again for each column).
  const shift = `CROSS JOIN LATERAL (SELECT make_interval(secs => ((extract(epoch from a.created_at) - extract(epoch from date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')) + 3600 + random() * 3600 + g * ($2::int * 86400.0 / $1::int))) AS shift OFFSET 0) s`;
  // Every column copied but the ones a past payment has of its own (listed by name: a whole-row copy through
  // jsonb_populate_record cost 0.3 ms a row).
  const columns = (
    await client.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'authorizations' ORDER BY ordinal_position`,
    )
  ).rows.map((r) => String(r.column_name));
  const own: Record<string, string> = {
    id: `'hist_' || md5(a.id || ':' || g)`,
    nonce: `'0x' || md5(a.nonce || ':' || g) || md5(g || ':' || a.nonce)`,
    status: `'signed'`,
    idempotency_key: 'NULL',
    request_hash: 'NULL',
    created_at: 'a.created_at - s.shift',
    signed_at: 'a.created_at - s.shift',
    valid_after: 'a.valid_after - extract(epoch from s.shift)::bigint',
    valid_before: 'a.valid_before - extract(epoch from s.shift)::bigint',
  };
  const list = columns.map((c) => `"${c}"`).join(', ');
  const values = columns.map((c) => own[c] ?? `a."${c}"`).join(', ');
  // Inserted oldest first, so the physical order follows valid_before as on a running service (its BRIN
  // index then keeps ranges of the past apart from the newest pages).
  const authorizations = await client.query(
    `INSERT INTO authorizations (${list})
     SELECT ${values}
       FROM authorizations a
      CROSS JOIN generate_series(1, $1::int) g
      ${shift}
      WHERE a.status = 'signed'
      ORDER BY a.valid_before - extract(epoch from s.shift)::bigint`,
    [copies, days],
  );
  const auditEvents = await client.query(
    `INSERT INTO audit_events (chain_key, seq, event_type, actor, payload, prev_hash, hash, created_at)
     SELECT 'history:' || md5(a.chain_key || ':' || g), a.seq, a.event_type, a.actor, a.payload, a.prev_hash, a.hash, a.created_at - s.shift
       FROM audit_events a
      CROSS JOIN generate_series(1, $1::int) g
      ${shift}
      WHERE a.chain_key NOT LIKE 'history:%'
      ORDER BY a.created_at - s.shift`,
    [copies, days],
  );
  // Windows start on the UTC day, ISO week (Monday) and month, as the policy's windows do.
  const spendWindows = await client.query(
    `INSERT INTO wallet_spend_totals (wallet_id, window_kind, window_start, spent_micro, payment_count)
     SELECT w.wallet_id, k.kind, k.start, 1000000, $1::int
       FROM (SELECT DISTINCT wallet_id FROM wallet_spend_totals) w
      CROSS JOIN (
        SELECT DISTINCT kind, start FROM (
          SELECT 'day' AS kind, d::date AS start, date_trunc('day', now() AT TIME ZONE 'UTC')::date AS current FROM generate_series(1, $2::int) n, LATERAL (SELECT (now() AT TIME ZONE 'UTC') - make_interval(days => n)) x(d)
          UNION ALL
          SELECT 'week', date_trunc('week', d)::date, date_trunc('week', now() AT TIME ZONE 'UTC')::date FROM generate_series(1, $2::int) n, LATERAL (SELECT (now() AT TIME ZONE 'UTC') - make_interval(days => n)) x(d)
          UNION ALL
          SELECT 'month', date_trunc('month', d)::date, date_trunc('month', now() AT TIME ZONE 'UTC')::date FROM generate_series(1, $2::int) n, LATERAL (SELECT (now() AT TIME ZONE 'UTC') - make_interval(days => n)) x(d)
        ) all_windows WHERE start < current
      ) k
     ON CONFLICT DO NOTHING`,
    [copies, days],
  );
  return {
    authorizations: authorizations.rowCount ?? 0,
    auditEvents: auditEvents.rowCount ?? 0,
    spendWindows: spendWindows.rowCount ?? 0,
  };
}

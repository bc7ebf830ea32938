/**
 * The database `npm run bench` measures made to look like a running service's before (a): BENCH_HISTORY past
 * payments (default 300,000 over 90 days; 0 for none), with their audit rows and past spend windows
 * (./seed-payment-history.ts), then VACUUM ANALYZE, as autovacuum would have run.
 *
 * Why: without history the tables hold a few thousand rows and autovacuum analyzes authorizations every few
 * seconds at 400/s (measured: a quarter of the two cores for a second each time), where a running service's is
 * analyzed every few minutes. A running service's tables also have statistics (autovacuum analyzes them about once
 * a minute); this database is a minute old and has none, and the plans cached by the API's connections were made on
 * near-empty tables (measured: the signature record then scans all authorizations). Unvacuumed history would be
 * vacuumed during (c) (measured: 14 times the WAL per payment). Limits: the history copies the payments made so far
 * (the warm-up's), so its wallets are the bench's own.
 */
import pg from 'pg';
import { seedPaymentHistory, type SeededHistory } from './seed-payment-history.js';

/** About `history` past payments (copies of each signed one so far), then VACUUM ANALYZE; what was seeded. */
export async function prepareHistory(connectionString: string, history: number): Promise<SeededHistory> {
  let seeded: SeededHistory = { authorizations: 0, auditEvents: 0, spendWindows: 0 };
  const client = new pg.Client(connectionString);
  await client.connect();
  const paid = Number(
    (await client.query<{ n: string }>(`SELECT count(*) AS n FROM authorizations WHERE status = 'signed'`)).rows[0]!.n,
  );
  const copies = Math.ceil(history / Math.max(1, paid));
  if (history > 0) {
    process.stderr.write(`• history: ${copies} past payments for each of the ${paid} so far, over 90 days\n`);
    seeded = await seedPaymentHistory(client, { copies, days: 90 });
  }
  process.stderr.write('• VACUUM ANALYZE (what autovacuum does on a running service)\n');
  await client.query('VACUUM ANALYZE');
  await client.end();
  return seeded;
}

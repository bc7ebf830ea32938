/**
 * Two read-outs of bench/support/steady-tail.ts over its steady phase: the API's signer calls beside the signer's
 * own time for them and its HSM signatures (two scrapes of each service's /metrics), and the statements PostgreSQL
 * ran most often (pg_stat_statements, reset when the phase begins). Not a test: what they read is printed.
 */
import pg from 'pg';
import { describeHistogram, histogramDelta } from './histogram-delta.js';

/** The API's signer calls over (c) beside the signer's own time for them and its HSM signatures (two scrapes each). */
export function signerTimeLine([apiBefore, signerBefore]: string[], [apiAfter, signerAfter]: string[]): string {
  const method = 'method="sign_transfer_authorization"';
  const call = histogramDelta(apiBefore!, apiAfter!, 'treasury_signer_call_duration_seconds', method);
  const own = histogramDelta(signerBefore!, signerAfter!, 'treasury_signer_request_duration_seconds', method);
  const hsm = histogramDelta(
    signerBefore!,
    signerAfter!,
    'treasury_signer_hsm_operation_duration_seconds',
    'op="sign"',
  );
  return `signer calls seen by the API: ${describeHistogram(call)}; the signer's own time for them: ${describeHistogram(own)}; its HSM signatures: ${describeHistogram(hsm)}`;
}

/** pg_stat_statements from now (reset) to `read`: the statements most often run, with their mean and longest time. */
export async function statementStats(connectionString: string): Promise<{ read(): Promise<string[]> }> {
  const client = new pg.Client(connectionString);
  await client.connect();
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await client.query('SELECT pg_stat_statements_reset()');
  return {
    async read() {
      const rows = (
        await client.query<{ db: string; calls: string; mean: number; max: number; query: string }>(
          `SELECT d.datname AS db, s.calls::text, s.mean_exec_time AS mean, s.max_exec_time AS max, s.query
             FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
            WHERE s.query NOT LIKE '%pg_stat_%' ORDER BY s.calls DESC LIMIT 8`,
        )
      ).rows;
      await client.end();
      return rows.map(
        (r) =>
          `statement (${r.db}) ×${r.calls}, mean ${r.mean.toFixed(1)} ms, longest ${r.max.toFixed(0)} ms: ${r.query.replace(/\s+/g, ' ').slice(0, 70)}`,
      );
    },
  };
}

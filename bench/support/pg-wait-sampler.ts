/**
 * Samples PostgreSQL's activity during a bench phase (./steady-tail.ts): every `everyMs`, from
 * pg_stat_activity, how many of the services' backends are running a statement and what each one waits on
 * (wait_event_type:wait_event, or `cpu` when it waits on nothing), and the longest-running statement by
 * application (treasury-api, treasury-signer), timed on the wall clock (epoch ms).
 *
 * Why: a commit that waits for its WAL flush (`IO:WalSync`, `LWLock:WALWrite`), a lock queue
 * (`Lock:advisory`) or a checkpoint shows here at the moment a request stalls. Limits: a sample is a
 * snapshot (a wait shorter than `everyMs` is seen by chance); the sampler's own query runs on the same
 * server, one backend of its own.
 */
import pg from 'pg';
import { callbackQuery } from '../../src/api/db/pg-callback-query.js';

export interface PgWaitSample {
  at: number;
  /** Wait (or `cpu`) → backends of the services in it. */
  waits: Record<string, number>;
  /** Application name → the longest-running active statement's age, ms. */
  oldestMs: Record<string, number>;
}

const SAMPLE_SQL = `SELECT application_name AS app, coalesce(wait_event_type || ':' || wait_event, 'cpu') AS wait,
                           extract(epoch FROM clock_timestamp() - query_start) * 1000 AS age_ms
                      FROM pg_stat_activity
                     WHERE state = 'active' AND pid <> pg_backend_pid() AND application_name LIKE 'treasury-%'`;

export interface PgWaitSampler {
  stop(): Promise<PgWaitSample[]>;
}

export async function startPgWaitSampler(connectionString: string, everyMs = 10): Promise<PgWaitSampler> {
  const client = new pg.Client({ connectionString, application_name: 'bench-wait-sampler' });
  await client.connect();
  const samples: PgWaitSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      // pg's callback form: its promise form keeps each statement through two young collections, and 100 a second
      // of them filled the load generator's old generation (docs/performance.md, "What the API promotes, and when V8
      // collects it").
      const rows = (await callbackQuery<{ app: string; wait: string; age_ms: number }>(client, { text: SAMPLE_SQL }))
        .rows;
      const sample: PgWaitSample = { at, waits: {}, oldestMs: {} };
      for (const r of rows) {
        sample.waits[r.wait] = (sample.waits[r.wait] ?? 0) + 1;
        sample.oldestMs[r.app] = Math.max(sample.oldestMs[r.app] ?? 0, Number(r.age_ms));
      }
      samples.push(sample);
      const wait = at + everyMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await client.end();
      return samples;
    },
  };
}

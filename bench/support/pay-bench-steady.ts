/**
 * `npm run bench`'s steady phase (c): payments over many wallets at a steady offered rate (./drive-at-rate.ts), with
 * what PostgreSQL did meanwhile (its costliest statements, the WAL written and the segments created, autovacuum's
 * runs by table), the machine's CPU each second, the page cache, the services' threads — and, measured just before
 * it, its floor (./steady-floor.ts): a payment's hand-offs with none of its work, driven closed-loop at saturation,
 * at (a)'s rate, and at (c)'s, so that (c)'s tail can be read against what this machine gives any service of that
 * shape (./pay-ratio-bound.ts reads the first two).
 *
 * What is not measured, and why: a checkpoint first (a running server recycles its WAL segments; a database a
 * minute old creates each new one by writing 16 MB of zeros while commits wait — measured in (c) without it, both
 * group-commit statements stalled 28–109 ms at once, two to four times in 8 s), and 5 s at the rate before (c)
 * (the saturation phases leave work behind, and after a checkpoint each page's first change writes its full image:
 * measured, 7–8 MB more WAL in (c) when only 2 s were left before it, none after 5 s).
 */
import pg from 'pg';
import { freePort } from '../../test/support/test-database.js';
import { drive, type DriveResult } from './closed-loop.js';
import { driveAtRate, type RateResult } from './drive-at-rate.js';
import { KeepAliveLoadClient } from './keep-alive-load-client.js';
import { startSteadyFloor } from './steady-floor.js';
import { postgresProcessCpu } from './postgres-process-cpu.js';
import type { FloorDrive } from './pay-ratio-bound.js';
import type { ProcessThreads } from './thread-switches.js';
import { machineSeconds, pageCacheCounters, processCpuSeconds, type CpuSample } from './pay-bench-cpu.js';
import { rate } from './drive-each.js';
import type { PayLoad } from './pay-bench-load.js';

/** The API's and the signer's threads at one moment (./thread-switches.ts). */
export interface ServiceThreads {
  api: ProcessThreads | undefined;
  signer: ProcessThreads | undefined;
}

/** µs of busy work per request in the floor's front and echo process. */
export interface FloorWork {
  front: number;
  echo: number;
}

export interface SteadyFloorRun {
  /** The floor at (c)'s rate. */
  result: RateResult;
  /** Its CPU a request, µs: the machine's and the floor's processes'; and the machine's busy share. */
  cpu: { machine: number; floor: number; busy: number };
  /** Closed-loop at the pay phases' concurrency, and at (a)'s rate. */
  atSaturation: FloorDrive;
  atPayRate: FloorDrive;
  /**
   * The floor again at (c)'s rate, its echo process busy for a signature's raw and required work per request
   * (`signatureMicros`): the least tail a service that keeps the signer's checks can have on this machine.
   */
  withSignature?: { result: RateResult; echoMicros: number };
}

/** A statement of (c) among the costliest three (pg_stat_statements). */
export interface StatementRow {
  query: string;
  calls: string;
  exec_ms: number;
  plan_ms: number;
  plans: string;
  wal_records: string;
  wal_fpi: string;
  blks_read: string;
  read_ms: number;
}

export interface SteadyRun {
  steady: RateResult;
  floor: SteadyFloorRun;
  /** The API's metrics just before (c) and just after it. */
  metricsBefore: string;
  metrics: string;
  cpuBefore: CpuSample;
  cpuAfter: CpuSample;
  /** One CPU sample a second through (c), the first and last being `cpuBefore` and `cpuAfter`. */
  seconds: CpuSample[];
  threadsBefore: ServiceThreads;
  threadsAfter: ServiceThreads;
  pageCacheBefore: { refaults: number; majorFaults: number };
  pageCacheAfter: { refaults: number; majorFaults: number };
  statementRows: StatementRow[];
  /** WAL bytes written in (c), and segments created (pg_stat_io's WAL 'init' context, PostgreSQL 18). */
  wal: { bytes: string; created: string };
  /** Autovacuum's and autoanalyze's runs finished in (c) by table, the longest first. */
  upkeep: Array<{ table: string; vacuums: number; analyzes: number; ms: number }>;
}

export interface SteadyPhaseOptions {
  connectionString: string;
  pgDataDir: string;
  /** The repository's root (the floor's processes run from it). */
  cwd: string;
  api: string;
  load: PayLoad;
  walletIds: readonly string[];
  /** BENCH_WALLETS, as the progress line names it. */
  wallets: number;
  concurrency: number;
  seconds: number;
  steadyRate: number;
  /** (a)'s rate, at which the floor is driven a second time. */
  payRate: number;
  floorWork: FloorWork;
  /**
   * The HSM's raw CPU and the signer's required work a signature, µs (./signer-ratio-bound.ts, measured in the
   * same run): with it, the floor is driven once more at (c)'s rate with that much busy work in its echo.
   */
  signatureMicros?: number;
  sample: () => CpuSample;
  threads: () => ServiceThreads;
}

/** CHECKPOINT, as a running server has, so that (c) measures the service rather than a young database. */
async function checkpoint(connectionString: string): Promise<void> {
  const client = new pg.Client(connectionString);
  await client.connect();
  await client.query('CHECKPOINT');
  await client.end();
}

/** The floor of (c), measured just before it (./steady-floor.ts). */
async function measureSteadyFloor(o: SteadyPhaseOptions): Promise<SteadyFloorRun> {
  const busy = o.floorWork.front + o.floorWork.echo > 0;
  process.stderr.write(
    `• baseline: the steady floor (a payment's hand-offs, ${busy ? 'busy work' : 'no work'}), ${o.concurrency} concurrent for ${Math.min(o.seconds, 5)} s, then ${o.steadyRate}/s offered, ${o.seconds} s\n`,
  );
  const floor = await startSteadyFloor({
    connectionString: o.connectionString,
    port: await freePort(),
    cwd: o.cwd,
    workMicros: o.floorWork,
  });
  const floorClient = new KeepAliveLoadClient({ host: '127.0.0.1', port: floor.port, connections: o.concurrency });
  const floorSample = () => ({
    machine: machineSeconds().busy,
    front: processCpuSeconds(floor.pid),
    echo: processCpuSeconds(floor.echoPid),
    postgres: Object.values(postgresProcessCpu(o.pgDataDir)).reduce((t, v) => t + v, 0),
    load: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  });
  try {
    const floorOnce = async () => (await floorClient.request('POST', '/pay', o.load.headers, o.load.payload)) === 200;
    /** The floor's CPU a request by part over one drive of it. */
    const floorParts = async (run: () => Promise<DriveResult>): Promise<FloorDrive> => {
      const before = floorSample();
      const result = await run();
      const after = floorSample();
      const perRequest = (k: keyof typeof after) => ((after[k] - before[k]) / result.ops) * 1e6;
      return {
        rate: rate(result),
        front: perRequest('front'),
        hop: perRequest('echo'),
        postgres: perRequest('postgres'),
        load: perRequest('load'),
        machine: perRequest('machine'),
      };
    };
    // First closed-loop, as the pay phases run: what the hand-offs alone cost the machine at saturation (the
    // payments' ceiling); then at (a)'s own rate, where each part's cost a request is set beside (a)'s.
    const atSaturation = await floorParts(() => drive(o.concurrency, Math.min(o.seconds, 5), floorOnce));
    const atPayRate = await floorParts(() => driveAtRate(o.payRate, Math.min(o.seconds, 5), 256, floorOnce));
    await driveAtRate(o.steadyRate, 2, 256, floorOnce);
    const before = floorSample();
    const result = await driveAtRate(o.steadyRate, o.seconds, 256, floorOnce);
    const after = floorSample();
    const cpu = {
      machine: ((after.machine - before.machine) / result.ops) * 1e6,
      floor: ((after.front - before.front + after.echo - before.echo) / result.ops) * 1e6,
      busy: (after.machine - before.machine) / result.seconds / 2,
    };
    return { result, cpu, atSaturation, atPayRate };
  } finally {
    floorClient.close();
    floor.stop();
  }
}

/**
 * The floor at (c)'s rate with `echoMicros` more busy work a request in its echo process: a signature's raw and
 * required work, where the signer does it — between the front's hand-off and its commit.
 */
async function measureSignatureFloor(o: SteadyPhaseOptions, echoMicros: number): Promise<RateResult> {
  process.stderr.write(
    `• baseline: the steady floor with a signature's work (${echoMicros.toFixed(0)} µs a request in its echo), ${o.steadyRate}/s offered, ${o.seconds} s\n`,
  );
  const floor = await startSteadyFloor({
    connectionString: o.connectionString,
    port: await freePort(),
    cwd: o.cwd,
    workMicros: { front: o.floorWork.front, echo: o.floorWork.echo + echoMicros },
  });
  const client = new KeepAliveLoadClient({ host: '127.0.0.1', port: floor.port, connections: o.concurrency });
  try {
    const once = async () => (await client.request('POST', '/pay', o.load.headers, o.load.payload)) === 200;
    await driveAtRate(o.steadyRate, 2, 256, once);
    return await driveAtRate(o.steadyRate, o.seconds, 256, once);
  } finally {
    client.close();
    floor.stop();
  }
}

/** The checkpoint, the floor, 5 s unmeasured at the rate, then (c) with PostgreSQL's, the machine's and the threads' figures. */
export async function runSteadyPhase(o: SteadyPhaseOptions): Promise<SteadyRun> {
  const { load, sample, threads } = o;
  process.stderr.write(`• pay (c): ${o.wallets} wallets, steady ${o.steadyRate} pays/s offered, ${o.seconds} s\n`);
  await checkpoint(o.connectionString);
  const floor = await measureSteadyFloor(o);
  if (o.signatureMicros !== undefined && o.signatureMicros > 0)
    floor.withSignature = {
      result: await measureSignatureFloor(o, o.signatureMicros),
      echoMicros: o.signatureMicros,
    };
  load.phase = '(c) unmeasured';
  await driveAtRate(o.steadyRate, 5, 256, load.spread(o.walletIds));
  const metricsBefore = await (await fetch(`${o.api}/metrics`)).text();
  const statements = new pg.Client(o.connectionString);
  await statements.connect();
  await statements.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await statements.query('SELECT pg_stat_statements_reset()');
  await statements.query(`SELECT pg_stat_reset_shared('io')`);
  const walStart = (await statements.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  // Autovacuum and autoanalyze runs per table (PostgreSQL 18 counts their time), to name the upkeep of (c).
  const upkeepQuery = `SELECT relname, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes,
                              coalesce(total_autovacuum_time, 0)::float8 AS vacuum_ms, coalesce(total_autoanalyze_time, 0)::float8 AS analyze_ms
                         FROM pg_stat_user_tables`;
  type UpkeepRow = { relname: string; vacuums: number; analyzes: number; vacuum_ms: number; analyze_ms: number };
  const upkeepBefore = new Map((await statements.query<UpkeepRow>(upkeepQuery)).rows.map((r) => [r.relname, r]));
  const threadsBefore = threads();
  const cpuBefore = sample();
  const pageCacheBefore = pageCacheCounters();
  // One CPU sample per second of (c), to set each second's tail beside what the machine was doing then.
  const seconds: CpuSample[] = [cpuBefore];
  const ticker = setInterval(() => seconds.push(sample()), 1000);
  load.phase = '(c)';
  const steady = await driveAtRate(o.steadyRate, o.seconds, 256, load.spread(o.walletIds));
  clearInterval(ticker);
  const cpuAfter = sample();
  const threadsAfter = threads();
  const pageCacheAfter = pageCacheCounters();
  seconds.push(cpuAfter);
  const statementRows = (
    await statements.query<StatementRow>(
      `SELECT query, calls, total_exec_time AS exec_ms, total_plan_time AS plan_ms, plans, wal_records, wal_fpi, shared_blks_read AS blks_read, shared_blk_read_time AS read_ms
         FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 3`,
    )
  ).rows;
  // pg_stat_io's WAL 'init' context counts the bytes written to create new segments (PostgreSQL 18).
  const wal = (
    await statements.query<{ bytes: string; created: string }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS bytes,
              (SELECT coalesce(sum(write_bytes), 0) FROM pg_stat_io WHERE object = 'wal' AND context = 'init')::float8
                / pg_size_bytes(current_setting('wal_segment_size')) AS created`,
      [walStart],
    )
  ).rows[0]!;
  // An autovacuum worker reports a table's run when it finishes it: one still running at the end is not counted.
  const upkeep = (await statements.query<UpkeepRow>(upkeepQuery)).rows
    .map((r) => {
      const b = upkeepBefore.get(r.relname);
      return {
        table: r.relname,
        vacuums: r.vacuums - (b?.vacuums ?? 0),
        analyzes: r.analyzes - (b?.analyzes ?? 0),
        ms: r.vacuum_ms - (b?.vacuum_ms ?? 0) + r.analyze_ms - (b?.analyze_ms ?? 0),
      };
    })
    .filter((r) => r.vacuums > 0 || r.analyzes > 0)
    .sort((x, y) => y.ms - x.ms);
  await statements.end();
  const metrics = await (await fetch(`${o.api}/metrics`)).text();
  return {
    steady,
    floor,
    metricsBefore,
    metrics,
    cpuBefore,
    cpuAfter,
    seconds,
    threadsBefore,
    threadsAfter,
    pageCacheBefore,
    pageCacheAfter,
    statementRows,
    wal,
    upkeep,
  };
}

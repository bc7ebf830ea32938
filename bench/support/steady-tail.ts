/**
 * `node --import tsx bench/support/steady-tail.ts`: pay-bench's steady phase (c) alone, with its floor, and
 * the instruments that find its stalls — the API's and the signer's event-loop delay and collections in 100 ms
 * slices (./loop-probe.ts), PostgreSQL's waits every 10 ms (./pg-wait-sampler.ts), each burst of slow requests
 * laid beside them (./tail-timeline.ts). The same set-up as `npm run bench` before (c): 1,000 wallets with
 * the signer's policy store, each paid once, 3 s of load, the database's history (BENCH_HISTORY), VACUUM
 * ANALYZE, a closed-loop phase like (a), a checkpoint, the floor, the floor with a signature's work (its echo
 * busy for the HSM's raw CPU and the signer's required work a signature, measured first: the tail of a service
 * that did nothing but keep the signer's checks), 5 s unmeasured at the rate, then (c). The CPU a payment by
 * process, with the kernel's share of the API's and the signer's, in the closed loop and in (c)
 * (./service-cpu-split.ts): what a payment costs more when each one wakes the services.
 *
 * Why: a run of the whole bench takes minutes; comparing start-up flags or a change to the tail needs several
 * runs interleaved with the commit before, on a machine whose load moves. STEADY_ROOT runs another checkout's
 * API and signer (e.g. a worktree of the commit before) under the same instruments.
 *
 * Options (env): BENCH_SECONDS (5), BENCH_STEADY_RATE (400), BENCH_WALLETS (1000), BENCH_HISTORY (300,000),
 * STEADY_ROOT, STEADY_API_FLAGS / STEADY_SIGNER_FLAGS (node flags for each, replacing the start-up flags of
 * ops/node-flags.ts given by default), STEADY_PG_SETTINGS (PostgreSQL settings, "name=value …", for a diagnosis
 * such as synchronous_commit=off to see what the WAL's flush adds — never how Treasury runs), STEADY_LABEL
 * (printed), STEADY_SUMMARY_FILE (one JSON line appended), BENCH_HEAP_PROFILE_DIR (the API's sampling heap
 * profile over (c) alone, as pay-bench takes it over (a) and (b): ./heap-sampling-probe.ts; with
 * HEAP_PROBE_SURVIVORS=1, what it promoted), STEADY_API_STDOUT (a file for the API's
 * standard output: what `--trace-gc*` prints), STEADY_SIGNER_STDOUT (the same for the signer's, from its readiness
 * on), STEADY_TIMED_FILE (a JSON file with each request of (c): when it was sent, ms into the phase, and its latency
 * — to see which moments make the slowest percent).
 * Not a test: no assertions; children are stopped at the end.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createKnex, migrateLatest } from '../../src/api/db/knex-client.js';
import { startEmbeddedPostgres } from '../../src/api/db/embedded-postgres.js';
import { initSoftHsmToken } from '../../ops/softhsm/init-token.js';
import { freePort } from '../../test/support/test-database.js';
import { API_NODE_FLAGS, SIGNER_NODE_FLAGS } from '../../ops/node-flags.js';
import {
  benchPayBody,
  benchPost,
  createBenchWallets,
  runBench,
  startBenchApi,
  startTsChild,
} from './service-bench-parts.js';
import { benchApprover } from './owner-policy-bench.js';
import { KeepAliveLoadClient } from './keep-alive-load-client.js';
import { drive, percentile } from './closed-loop.js';
import { driveAtRate, type RateResult } from './drive-at-rate.js';
import { seedPaymentHistory } from './seed-payment-history.js';
import { startSteadyFloor } from './steady-floor.js';
import { startPgWaitSampler } from './pg-wait-sampler.js';
import { slowRequestBursts } from './slow-request-bursts.js';
import { tailTimeline } from './tail-timeline.js';
import { startLoopProbe, type ProbeSlice } from './loop-probe.js';
import { benchSignerEnv } from './bench-token.js';
import { measureHsmCeiling } from './pay-bench-ceilings.js';
import { signatureMicros } from './signer-ratio-bound.js';
import { describeCpuSplit, startCpuSplit, type CpuSplit } from './service-cpu-split.js';
import { startHeapSampling } from './profile-windows.js';
import { machineSeconds } from './pay-bench-cpu.js';
import { newIdempotencyKey } from '../../src/sdk/new-idempotency-key.js';
import { signerTimeLine, statementStats } from './steady-tail-readouts.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const HEAP_DIR = process.env.BENCH_HEAP_PROFILE_DIR;
const RATE = Number(process.env.BENCH_STEADY_RATE ?? 400);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 1000);
const HISTORY = Number(process.env.BENCH_HISTORY ?? 300_000);
const SERVICE_ROOT = process.env.STEADY_ROOT ? path.resolve(process.env.STEADY_ROOT) : ROOT;
const SLICE_MS = 100;
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

const flags = (env: string | undefined, fallback: readonly string[]) =>
  env === undefined ? [...fallback] : env.split(/\s+/).filter(Boolean);

const readSlices = (file: string): ProbeSlice[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as ProbeSlice)
    : [];

interface Services {
  api: string;
  /** The signer's loopback /metrics. */
  signerMetrics: string;
  apiKey: string;
  walletIds: string[];
  children: ChildProcess[];
  /** The API's and the signer's processes, for their CPU in (c). */
  pids: { api: number | undefined; signer: number | undefined };
  probeFiles: { api: string; signer: string };
  /** The HSM's raw CPU and the signer's required work a signature, µs (./signer-ratio-bound.ts). */
  signatureMicros: number;
}

/** PostgreSQL's set-up, the signer and the API (under the probe), the bench account and its wallets. */
async function startServices(dir: string, connectionString: string, signerDb: string): Promise<Services> {
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  // What a signature must cost this machine, for the floor with a signature's work (before any service runs).
  const { ratioBound } = await measureHsmCeiling({ token, seconds: 3, usdc: USDC, payTo: SELLER });
  const approver = benchApprover();
  const probe = [path.join(HERE, 'loop-probe.ts')];
  const probeFiles = { api: path.join(dir, 'api.probe'), signer: path.join(dir, 'signer.probe') };
  const socket = path.join(dir, 'signer.sock');
  const signerMetricsPort = await freePort();
  const signer = await startTsChild('signer/main.ts', {
    root: SERVICE_ROOT,
    nodeFlags: flags(process.env.STEADY_SIGNER_FLAGS, SIGNER_NODE_FLAGS),
    imports: probe,
    env: {
      LOOP_PROBE_FILE: probeFiles.signer,
      TREASURY_SIGNER_SOCKET: socket,
      TREASURY_SIGNER_METRICS_PORT: String(signerMetricsPort),
      ...benchSignerEnv(token),
      TREASURY_SIGNER_DATABASE_URL: signerDb,
      TREASURY_SIGNER_POLICY_APPROVER: approver.address,
    },
    ready: (line) => line.includes('"msg":"signer ready"'),
  });
  // STEADY_SIGNER_STDOUT: the signer's standard output from its readiness on (what `--trace-gc*` prints there).
  if (process.env.STEADY_SIGNER_STDOUT) {
    const out = fs.openSync(process.env.STEADY_SIGNER_STDOUT, 'w');
    signer.child.stdout!.on('data', (chunk: Buffer) => fs.writeSync(out, chunk));
  }
  const port = await freePort();
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  const apiChild = await startBenchApi({
    root: SERVICE_ROOT,
    databaseUrl: connectionString,
    signerSocket: socket,
    adminToken: admin,
    port,
    nodeFlags: flags(process.env.STEADY_API_FLAGS, API_NODE_FLAGS),
    imports: HEAP_DIR ? [...probe, path.join(HERE, 'heap-sampling-probe.ts')] : probe,
    env: { LOOP_PROBE_FILE: probeFiles.api, ...(HEAP_DIR ? { HEAP_PROBE_DIR: HEAP_DIR } : {}) },
    // STEADY_API_STDOUT: a file for the API's standard output (what V8's --trace-gc* flags print there).
    ...(process.env.STEADY_API_STDOUT ? { stdout: fs.openSync(process.env.STEADY_API_STDOUT, 'w') } : {}),
  });
  const api = `http://127.0.0.1:${port}`;
  const post = benchPost(api);
  const apiKey = (await post('/v1/treasury', admin, { owner_type: 'bench', owner_id: 'bench' })).body.api_key as string;
  const walletIds = await createBenchWallets(post, apiKey, WALLETS);
  const signerMetrics = `http://127.0.0.1:${signerMetricsPort}/metrics`;
  return {
    api,
    signerMetrics,
    apiKey,
    walletIds,
    children: [signer.child, apiChild],
    pids: { api: apiChild.pid, signer: signer.child.pid },
    probeFiles,
    signatureMicros: signatureMicros(ratioBound),
  };
}

/**
 * Every wallet paid once, 3 s of load, the history, VACUUM ANALYZE, 5 s closed loop as (a) (its CPU a payment
 * measured by `closedLoop`), a checkpoint.
 */
async function warmUp(
  pay: (i: number) => Promise<boolean>,
  connectionString: string,
  closedLoop: () => (payments: number) => CpuSplit,
): Promise<CpuSplit & { rate: number }> {
  for (let i = 0; i < WALLETS; i += 32)
    await Promise.all(Array.from({ length: Math.min(32, WALLETS - i) }, (_, k) => pay(i + k)));
  await drive(32, 3, (i) => pay(i * 7919));
  const client = new pg.Client(connectionString);
  await client.connect();
  try {
    if (HISTORY > 0) {
      const paid = Number((await client.query(`SELECT count(*) AS n FROM authorizations`)).rows[0].n);
      await seedPaymentHistory(client, { copies: Math.ceil(HISTORY / Math.max(1, paid)), days: 90 });
    }
    await client.query('VACUUM ANALYZE');
    const split = closedLoop();
    const { ops, seconds } = await drive(32, 5, (i) => pay(i * 7919));
    const saturated = { ...split(ops), rate: Math.round(ops / seconds) };
    await client.query('CHECKPOINT');
    return saturated;
  } finally {
    await client.end();
  }
}

/** The floor (./steady-floor.ts) at the rate, 2 s unmeasured then SECONDS; `echoMicros` of busy work a request in its echo. */
async function measureFloor(connectionString: string, echoMicros = 0): Promise<RateResult> {
  const floor = await startSteadyFloor({
    connectionString,
    port: await freePort(),
    cwd: ROOT,
    workMicros: { front: 0, echo: echoMicros },
  });
  const client = new KeepAliveLoadClient({ host: '127.0.0.1', port: floor.port, connections: 32 });
  try {
    const once = async () => (await client.request('POST', '/pay', {}, Buffer.from('{}'))) === 200;
    await driveAtRate(RATE, 2, 256, once);
    return await driveAtRate(RATE, SECONDS, 256, once);
  } finally {
    client.close();
    floor.stop();
  }
}

function report(
  label: string,
  load: number,
  busy: number,
  steady: RateResult,
  floor: RateResult,
  signatureFloor: { result: RateResult; echoMicros: number },
  cpu: { saturated: CpuSplit & { rate: number }; steady: CpuSplit },
  timeline: string[],
): Record<string, unknown> {
  const p = (r: RateResult, q: number) => percentile(r.latenciesMs, q);
  const timedFile = process.env.STEADY_TIMED_FILE;
  if (timedFile)
    fs.writeFileSync(timedFile, JSON.stringify({ startedAtEpochMs: steady.startedAtEpochMs, timed: steady.timed }));
  const bursts = slowRequestBursts(steady.timed, 20);
  const summary = {
    label,
    at: new Date().toISOString(),
    load1: load,
    busyPct: Math.round(busy * 100),
    p50: +p(steady, 50).toFixed(1),
    p99: +p(steady, 99).toFixed(1),
    floorP50: +p(floor, 50).toFixed(1),
    floorP99: +p(floor, 99).toFixed(1),
    ratio: +(p(steady, 99) / p(floor, 99)).toFixed(2),
    signatureFloorP50: +p(signatureFloor.result, 50).toFixed(1),
    signatureFloorP99: +p(signatureFloor.result, 99).toFixed(1),
    ceilingRatio: +(p(signatureFloor.result, 99) / p(floor, 99)).toFixed(2),
    slow: bursts.slow,
    bursts: bursts.bursts.length,
    medianGapMs: Math.round(bursts.medianGapMs),
    errors: steady.errors,
    // The CPU a payment, µs, by process: closed loop (as (a)) and in (c).
    cpu,
  };
  const lines = [
    `steady tail ${label}: ${RATE}/s offered, ${SECONDS} s, load average ${load.toFixed(2)} at the start, machine ${summary.busyPct} % busy in (c)`,
    `(c) p50 ${summary.p50} ms, p99 ${summary.p99} ms; floor p50 ${summary.floorP50} ms, p99 ${summary.floorP99} ms; p99 ratio ${summary.ratio}×; errors ${steady.errors}`,
    `the floor with a signature's work (its echo busy ${signatureFloor.echoMicros.toFixed(0)} µs more a request: the HSM's raw CPU and the signer's required work): p50 ${summary.signatureFloorP50} ms, p99 ${summary.signatureFloorP99} ms, ${summary.ceilingRatio}× the floor's p99`,
    `CPU a payment, µs, closed loop (32 clients, ${cpu.saturated.rate}/s): ${describeCpuSplit(cpu.saturated)}`,
    `CPU a payment, µs, in (c): ${describeCpuSplit(cpu.steady)} (PostgreSQL's with the wait sampler's 100 statements a second)`,
    `requests over 20 ms: ${bursts.slow} of ${steady.timed.length} in ${bursts.bursts.length} bursts, median gap between bursts' starts ${summary.medianGapMs} ms`,
    ...timeline,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return summary;
}

/** STEADY_PG_SETTINGS ("name=value name=value"): server settings for a diagnosis, never a recommendation. */
function pgSettings(env: string | undefined): Record<string, string> {
  const pairs = (env ?? '').split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`STEADY_PG_SETTINGS: "${pair}" is not name=value`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-steady-tail-'));
  fs.chmodSync(dir, 0o755);
  const database = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    settings: { shared_preload_libraries: 'pg_stat_statements', ...pgSettings(process.env.STEADY_PG_SETTINGS) },
  });
  let services: Services | undefined;
  try {
    const knex = createKnex(database.connectionString, 4, 'treasury-bench');
    await migrateLatest(knex);
    await knex.raw('CREATE DATABASE treasury_signer');
    await knex.destroy();
    services = await startServices(dir, database.connectionString, database.connectionStringFor('treasury_signer'));
    const { apiKey, walletIds } = services;
    const client = new KeepAliveLoadClient({
      host: '127.0.0.1',
      port: Number(new URL(services.api).port),
      connections: 32,
    });
    const payload = Buffer.from(JSON.stringify(benchPayBody(USDC, SELLER)));
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const pay = async (i: number) =>
      (await client.request(
        'POST',
        `/v1/wallets/${walletIds[i % walletIds.length]}/pay`,
        { ...headers, 'idempotency-key': newIdempotencyKey('account') },
        payload,
      )) === 200;
    // The load generator under the same probe as the services: a burst names its stalls too (its own full
    // collection, which ./drive-at-rate.ts keeps out of a phase when it can, is measured as the services' latency).
    const loadProbeFile = path.join(dir, 'load.probe');
    startLoopProbe(loadProbeFile);
    const { api: apiPid, signer: signerPid } = services.pids;
    const cpuOf = { apiPid, signerPid, pgDataDir: path.join(dir, 'pg', 'data') };
    const saturated = await warmUp(pay, database.connectionString, () => startCpuSplit(cpuOf));
    const floor = await measureFloor(database.connectionString);
    const signatureFloor = {
      result: await measureFloor(database.connectionString, services.signatureMicros),
      echoMicros: services.signatureMicros,
    };
    await driveAtRate(RATE, 5, 256, (i) => pay(i * 7919));
    const load = os.loadavg()[0]!;
    const statements = await statementStats(database.connectionString);
    const scrapeBoth = async () =>
      Promise.all(
        [fetch(`${services!.api}/metrics`), fetch(services!.signerMetrics)].map(async (r) => (await r).text()),
      );
    const scrapesBefore = await scrapeBoth();
    const sampler = await startPgWaitSampler(database.connectionString, 10);
    const steadyCpu = startCpuSplit(cpuOf);
    const busyBefore = machineSeconds().busy;
    const stopHeapSampling = startHeapSampling(services.pids.api);
    const steady = await driveAtRate(RATE, SECONDS, 256, (i) => pay(i * 7919));
    await stopHeapSampling();
    const busy = (machineSeconds().busy - busyBefore) / steady.seconds / os.cpus().length;
    const cpu = { saturated, steady: steadyCpu(steady.ops) };
    const pgSamples = await sampler.stop();
    const statementLines = await statements.read();
    const scrapesAfter = await scrapeBoth();
    const signerSplit = signerTimeLine(scrapesBefore, scrapesAfter);
    client.close();
    await new Promise((r) => setTimeout(r, 2 * SLICE_MS));
    const timeline = tailTimeline({
      startedAtEpochMs: steady.startedAtEpochMs,
      requests: steady.timed,
      processes: [
        { name: 'api', slices: readSlices(services.probeFiles.api) },
        { name: 'signer', slices: readSlices(services.probeFiles.signer) },
        { name: 'load generator', slices: readSlices(loadProbeFile) },
      ],
      pg: pgSamples,
      sliceMs: SLICE_MS,
    });
    timeline.push(signerSplit, ...statementLines);
    const summary = report(
      process.env.STEADY_LABEL ?? path.basename(SERVICE_ROOT),
      load,
      busy,
      steady,
      floor,
      signatureFloor,
      cpu,
      timeline,
    );
    if (process.env.STEADY_SUMMARY_FILE)
      fs.appendFileSync(process.env.STEADY_SUMMARY_FILE, JSON.stringify(summary) + '\n');
  } finally {
    for (const child of services?.children.reverse() ?? []) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);

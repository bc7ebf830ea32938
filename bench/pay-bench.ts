/**
 * `npm run bench`: pay throughput and latency through HTTP (treasury-api and treasury-signer as their own
 * processes, real embedded PostgreSQL, real SoftHSM), (a) spread over 1,000 wallets and (b) on one hot
 * wallet, next to the ceilings measured in the same run: raw SoftHSM signing through the signer backend
 * alone, and the bare PostgreSQL advisory-lock + insert transaction. Prints one table with ratios; below it, what
 * the phases cost per payment, and for the steady phase the machine's cost of a hand-off between two processes
 * (./support/wake-up-cost.ts) and its floor, a payment's hand-offs at the same rate with none of its work
 * (./support/steady-floor.ts), measured in the same run — driven first at saturation and at (a)'s rate too, which
 * with the HSM's raw and the signer's required work bound the pay phases' ratio to raw and split a payment's CPU
 * by part (./support/pay-ratio-bound.ts) — and each burst of its slow requests beside the API's and the signer's
 * event-loop stalls and collections (./support/loop-probe.ts, loaded into both; the steady phase alone, with more
 * instruments: ./support/steady-tail.ts).
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 32), BENCH_WALLETS (default 1000),
 * BENCH_OWNER_POLICIES=0 (the signer without its policy store), BENCH_STORE_ROUNDS (default 8: rounds of each
 * comparison with a second API and signer without the store, ./support/store-cost-ab.ts),
 * BENCH_CODE=dist|sources (the services compiled, as production runs them — the default when `npm run build` is
 * current — or through tsx), BENCH_NODE_FLAGS (added to both services' start-up flags), BENCH_API_STDOUT and
 * BENCH_SIGNER_STDOUT (files for the services' standard output, e.g. with `--trace-gc`).
 * With the store (the default), the signer-alone ceiling is also measured three ways in alternating one-second
 * slices — a second signer process without the store, the store on a wallet without a signed policy, and on a
 * wallet whose policy is signed — and after (c) every bench wallet's policy is signed by the bench's approver
 * (./support/owner-policy-bench.ts) and (a) and (b) run again on the signed path.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Pkcs11Backend } from '../signer/backends/pkcs11/pkcs11-backend.js';
import { createKnex, migrateLatest } from '../src/api/db/knex-client.js';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { freePort } from '../test/support/test-database.js';
import { GENEROUS_SIGNER_LIMITS } from '../test/support/signer-harness.js';
import { signInBody } from '../test/support/sign-in.js';
import { postgresProcessCpu } from './support/postgres-process-cpu.js';
import { KeepAliveLoadClient } from './support/keep-alive-load-client.js';
import {
  BENCH_WALLET_POLICY,
  benchPayBody,
  benchPost,
  createBenchWallets,
  failureLines,
  resultTable,
  runBench,
  signerSignOnce,
  benchCode,
  startBenchApi,
  startTsChild,
} from './support/service-bench-parts.js';
import { SignerClient } from '../signer/protocol/signer-client.js';
import { measureWakeUpCost } from './support/wake-up-cost.js';
import { measureWakePlacement } from './support/wake-placement.js';
import { seedPaymentHistory, type SeededHistory } from './support/seed-payment-history.js';
import { drive, percentile } from './support/closed-loop.js';
import { measureSignerRatioBound, signerRatioBoundLine } from './support/signer-ratio-bound.js';
import { payRatioBound, payRatioBoundLine, type FloorDrive, type PartsMicros } from './support/pay-ratio-bound.js';
import { driveAtRate } from './support/drive-at-rate.js';
import { readProcStat } from './support/proc-stat.js';
import { kernelThreadCpu, kernelThreadPids, runningDamonMonitors } from './support/kernel-thread-cpu.js';
import { slowRequestBursts, type TimedRequest } from './support/slow-request-bursts.js';
import { newIdempotencyKey } from '../src/sdk/new-idempotency-key.js';
import { startSteadyFloor } from './support/steady-floor.js';
import { PROBE_SLICE_MS, readProbeSlices } from './support/loop-probe-slices.js';
import { tailTimeline } from './support/tail-timeline.js';
import { nodeFlagsFor } from '../ops/node-flags.js';
import { benchApprover, signBenchPolicies, signerStoreCeilings } from './support/owner-policy-bench.js';
import { startStoreOffPath, storeCostLines, type StoreCostComparison } from './support/store-cost-ab.js';
import { readProcessThreads, threadsLine, threadsPerOp } from './support/thread-switches.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 1000);
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 400);
const IDEMPOTENCY_KEYS = process.env.BENCH_IDEMPOTENCY_KEYS !== '0';
const PAT_WALLETS = Number(process.env.BENCH_PAT_WALLETS ?? 100);
const HISTORY = Number(process.env.BENCH_HISTORY ?? 300_000);
/** µs of busy work per request in the steady floor's front and echo process, `front,echo` (default none). */
const FLOOR_WORK = (([front, echo]) => ({ front: Number(front ?? 0) || 0, echo: Number(echo ?? 0) || 0 }))(
  (process.env.BENCH_FLOOR_WORK_US ?? '0,0').split(','),
);
const FLOOR_BUSY = FLOOR_WORK.front + FLOOR_WORK.echo > 0;
/** The signer's own policy store (docs/adr/0012-owner-signed-policies.md): on unless BENCH_OWNER_POLICIES=0. */
const OWNER_POLICIES = process.env.BENCH_OWNER_POLICIES !== '0';
/** Rounds (a one-second slice of each path) of each comparison with a signer without the store. */
const STORE_ROUNDS = Number(process.env.BENCH_STORE_ROUNDS ?? 8);
/**
 * Seconds of payments from wallets of their own before the first payments are measured (0: none, measured on a
 * pay path that never ran). Without them the first payments ran on code V8 had not compiled yet: the phase measured
 * the API's and the signer's warm-up along with what a wallet's first payment costs.
 */
const FIRST_PAY_WARM_SECONDS = Number(process.env.BENCH_FIRST_PAY_WARM_SECONDS ?? 3);
/** The wallets of that warm-up (paid in turn; never in a measured phase). */
const FIRST_PAY_WARM_WALLETS = 64;
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

interface Result {
  ops: number;
  seconds: number;
  latenciesMs: number[];
  errors: number;
  /** driveAtRate only: the latencies of the requests sent in each second of the phase (index = second). */
  bySecond?: number[][];
  /** driveAtRate only: each request's start (ms into the phase) and latency. */
  timed?: TimedRequest[];
}

const rate = (r: Result) => r.ops / r.seconds;

/** CPU seconds (user + system) a process has used, from /proc (Linux); NaN elsewhere. */
function processCpuSeconds(pid: number | undefined): number {
  return readProcStat(pid)?.cpuSeconds ?? NaN;
}

/**
 * CPU seconds from /proc/stat's first line (all cores): `busy` is everything but idle, iowait and steal;
 * `steal` is time the hypervisor ran something else while this machine's vCPUs wanted to run; `iowait` is
 * idle time while a process waited on the disk (PostgreSQL's WAL flushes, for one).
 */
function machineSeconds(): { busy: number; steal: number; iowait: number } {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const steal = cpu[7] ?? 0;
    // guest and guest_nice (8, 9) are already counted in user and nice.
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - idle - steal) / 100, steal: steal / 100, iowait: (cpu[4] ?? 0) / 100 };
  } catch {
    return { busy: NaN, steal: NaN, iowait: NaN };
  }
}

/**
 * The kernel's count of file pages read again after being evicted from the page cache, and of major page
 * faults (a mapped page read from disk): a service whose working set the host reclaims reads it back from
 * disk while requests wait.
 */
function pageCacheCounters(): { refaults: number; majorFaults: number } {
  try {
    const vmstat = fs.readFileSync('/proc/vmstat', 'utf8');
    const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(vmstat)?.[1] ?? NaN);
    return { refaults: count('workingset_refault_file'), majorFaults: count('pgmajfault') };
  } catch {
    return { refaults: NaN, majorFaults: NaN };
  }
}

interface CpuSample {
  api: number;
  signer: number;
  self: number;
  machine: number;
  steal: number;
  iowait: number;
  /** PostgreSQL's processes by role (./support/postgres-process-cpu.ts). */
  pg: Record<string, number>;
  /** The machine's kernel threads by kind (./support/kernel-thread-cpu.ts). */
  kernel: Record<string, number>;
}

/** The machine's CPU seconds between two samples beyond the API, the signer and the load generator: PostgreSQL and the rest. */
function beyondServices(before: CpuSample, after: CpuSample): number {
  return (
    after.machine -
    before.machine -
    (after.api - before.api) -
    (after.signer - before.signer) -
    (after.self - before.self)
  );
}

/** The machine's kernel threads' CPU seconds between two samples, all kinds together. */
function kernelThreadSeconds(before: CpuSample, after: CpuSample): number {
  return Object.keys(after.kernel).reduce(
    (sum, kind) => sum + (after.kernel[kind] ?? 0) - (before.kernel[kind] ?? 0),
    0,
  );
}

/** A phase's CPU per pay by part, µs, as ./support/pay-ratio-bound.ts sets it beside the floor's. */
function partsPerPay(before: CpuSample, after: CpuSample, ops: number): PartsMicros {
  const per = (seconds: number) => (seconds / ops) * 1e6;
  const pg = Object.keys(after.pg).reduce((t, role) => t + (after.pg[role] ?? 0) - (before.pg[role] ?? 0), 0);
  return {
    front: per(after.api - before.api),
    hop: per(after.signer - before.signer),
    postgres: per(pg),
    load: per(after.self - before.self),
    machine: per(after.machine - before.machine),
  };
}

/** PostgreSQL's CPU per pay between two samples, by role (largest first), and what is left of the machine's. */
function postgresShare(before: CpuSample, after: CpuSample, ops: number): string {
  const perPay = (seconds: number) => (seconds / ops) * 1e6;
  const roles = Object.keys(after.pg).map(
    (role) => [role, perPay((after.pg[role] ?? 0) - (before.pg[role] ?? 0))] as const,
  );
  const pgTotal = roles.reduce((sum, [, v]) => sum + v, 0);
  const rest = perPay(beyondServices(before, after)) - pgTotal;
  const shown = roles
    .filter(([, v]) => v >= 5)
    .sort((a, b) => b[1] - a[1])
    .map(([role, v]) => `${role} ${v.toFixed(0)}`)
    .join(', ');
  return `PostgreSQL ${pgTotal.toFixed(0)} (${shown}), the rest ${rest.toFixed(0)} (the kernel's own threads ${perPay(kernelThreadSeconds(before, after)).toFixed(0)})`;
}

/** Closed loop over a list: `concurrency` loops take the next item until every item was done once. */
async function driveEach<T>(
  concurrency: number,
  items: readonly T[],
  op: (item: T) => Promise<boolean>,
): Promise<Result> {
  const latenciesMs: number[] = [];
  let ops = 0;
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const t0 = performance.now();
        const ok = await op(items[next++]!);
        latenciesMs.push(performance.now() - t0);
        if (ok) ops++;
        else errors++;
      }
    }),
  );
  return { ops, seconds: (performance.now() - started) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b), errors };
}

/**
 * Node flags for the signer or API process: its own start-up flags (ops/node-flags.ts, as `npm run start:*` and
 * the images run it), then BENCH_CPU_PROFILE_DIR (V8 CPU profiles, see support/summarise-cpu-profile.ts) and
 * BENCH_NODE_FLAGS (e.g. `--perf-basic-prof` for `perf record`; a flag given again there wins).
 */
function childNodeFlags(entry: 'signer/main.ts' | 'src/api/main.ts'): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  return [
    ...nodeFlagsFor(entry),
    ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []),
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean),
  ];
}

/** The event-loop and collection probe loaded into the signer and the API (./support/loop-probe.ts). */
const LOOP_PROBE = path.join(ROOT, 'bench/support/loop-probe.ts');

/** Starts the signer (./support/service-bench-parts.ts) and resolves once it logs the message `ready`. */
async function startChild(entry: 'signer/main.ts', env: NodeJS.ProcessEnv, ready: string): Promise<ChildProcess> {
  const started = await startTsChild(entry, {
    env,
    nodeFlags: childNodeFlags(entry),
    imports: [LOOP_PROBE],
    ready: (line) => line.includes(`"msg":"${ready}"`),
  });
  // BENCH_SIGNER_STDOUT: a file for the signer's standard output from its ready line on (what V8's --trace-gc* print).
  const file = process.env.BENCH_SIGNER_STDOUT;
  if (file) {
    const out = fs.createWriteStream(file);
    started.child.stdout!.pipe(out);
  }
  return started.child;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bench-'));
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  // pg_stat_statements (shipped with the embedded server) gives PostgreSQL's side of phase (c) per statement.
  const pgDataDir = path.join(dir, 'pg', 'data');
  const database = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    port: await freePort(),
    settings: {
      shared_preload_libraries: 'pg_stat_statements',
      'pg_stat_statements.track_planning': 'on',
      track_io_timing: 'on',
    },
  });
  try {
    const knex = createKnex(database.connectionString, 4, 'treasury-bench');
    await migrateLatest(knex);
    // The signer's store: a database of its own on the same server (the signer migrates it at start).
    if (OWNER_POLICIES) await knex.raw('CREATE DATABASE treasury_signer');
    await knex.destroy();
    const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
    const pin = fs.readFileSync(token.pinFile, 'utf8').trim();
    process.stderr.write('• ceiling: raw SoftHSM sign through the backend\n');
    process.env.SOFTHSM2_CONF = token.softhsm2Conf;
    const backend = Pkcs11Backend.open({
      kind: 'pkcs11',
      modulePath: token.modulePath,
      tokenLabel: token.tokenLabel,
      pin,
      kekLabel: token.kekLabel,
      sessions: 4,
      signInline: 'when_alone',
      cacheSize: 100,
      cacheTtlMs: 600_000,
    });
    const account = await backend.createAccountKey();
    const key = await backend.createWalletKey(account);
    const digest = randomBytes(32);
    const rawCpuBefore = process.cpuUsage();
    const hsm = await drive(8, Math.min(SECONDS, 5), async () => {
      await backend.signDigest(account, key.walletKeyRef, digest);
      return true;
    });
    const rawCpu = process.cpuUsage(rawCpuBefore);
    // What the signer must do besides the HSM, on this machine: its rate's ceiling beside the raw one.
    const ratioBound = await measureSignerRatioBound(
      backend,
      account,
      (rawCpu.user + rawCpu.system) / hsm.ops,
      USDC,
      SELLER,
    );
    await backend.close();

    process.stderr.write('• ceiling: bare PostgreSQL advisory lock + insert\n');
    const pool = new pg.Pool({ connectionString: database.connectionString, max: 16 });
    await pool.query(
      'CREATE TABLE IF NOT EXISTS bench_tx (id bigserial primary key, k int not null, v bigint not null, at timestamptz not null default now())',
    );
    const dbTx = (hot: boolean) =>
      drive(16, Math.min(SECONDS, 5), async (i) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          const k = hot ? 1 : i % WALLETS;
          await client.query('SELECT pg_advisory_xact_lock($1)', [k]);
          await client.query('INSERT INTO bench_tx (k, v) VALUES ($1, $2)', [k, i]);
          await client.query('COMMIT');
          return true;
        } finally {
          client.release();
        }
      });
    const dbSpread = await dbTx(false);
    const dbHot = await dbTx(true);
    await pool.end();

    process.stderr.write(`• baseline: hand-offs between two processes, back to back and at ${STEADY_RATE}/s\n`);
    const wakeUps = await measureWakeUpCost(STEADY_RATE, 3);
    const placement = await measureWakePlacement();

    process.stderr.write('• starting treasury-signer and treasury-api\n');
    const socket = path.join(dir, 'signer.sock');
    // The approver of the bench wallets' signed policies (bench wallets are made with an api key).
    const approver = OWNER_POLICIES ? benchApprover() : null;
    // The bench signs thousands a second on one wallet: far past the signer's default per-wallet ceilings, so
    // they are raised here (the per-signature maximum keeps its default; bench payments are 0.001 USDC).
    const signerEnv = (signerSocket: string, store: boolean) => ({
      TREASURY_SIGNER_SOCKET: signerSocket,
      LOOP_PROBE_FILE: `${signerSocket}.probe`,
      TREASURY_PKCS11_MODULE: token.modulePath,
      TREASURY_PKCS11_TOKEN_LABEL: token.tokenLabel,
      TREASURY_PKCS11_KEK_LABEL: token.kekLabel,
      TREASURY_PKCS11_PIN_FILE: token.pinFile,
      SOFTHSM2_CONF: token.softhsm2Conf,
      ...GENEROUS_SIGNER_LIMITS,
      ...(store && approver
        ? {
            TREASURY_SIGNER_DATABASE_URL: database.connectionStringFor('treasury_signer'),
            TREASURY_SIGNER_POLICY_APPROVER: approver.address,
          }
        : {}),
    });
    children.push(await startChild('signer/main.ts', signerEnv(socket, true), 'signer ready'));
    // The signer process as the API uses it — frames over its socket, structured EIP-3009 hashing, the HSM,
    // low-S and yParity — with nothing else running: the ceiling of the whole pay path's signing stage.
    process.stderr.write('• ceiling: the signer process through its socket\n');
    const signerClient = new SignerClient({ socketPath: socket });
    const signerAccount = (await signerClient.createAccountKey()).account_key_ref;
    const signerWallet = await signerClient.createWalletKey({ account_key_ref: signerAccount });
    const signOnce = signerSignOnce(signerClient, signerAccount, signerWallet, USDC, SELLER);
    for (let i = 0; i < 200; i++) await signOnce();
    const signerCpuBefore = processCpuSeconds(children[0]?.pid);
    const signerAlone = await drive(8, Math.min(SECONDS, 5), async () => {
      await signOnce();
      return true;
    });
    const signerCpuPerSign = ((processCpuSeconds(children[0]?.pid) - signerCpuBefore) / signerAlone.ops) * 1e6;
    // The same on a wallet with a signed policy, and on a second signer process without the store.
    const bareSocket = path.join(dir, 'signer-bare.sock');
    const signerStore = approver
      ? await signerStoreCeilings({
          client: signerClient,
          account: signerAccount,
          wallet: signerWallet,
          signOnce,
          approver,
          policy: BENCH_WALLET_POLICY,
          seconds: Math.min(SECONDS, 5),
          startBare: () => startChild('signer/main.ts', signerEnv(bareSocket, false), 'signer ready'),
          bareSocket,
          usdc: USDC,
          payTo: SELLER,
        })
      : undefined;
    signerClient.close();

    const apiPort = await freePort();
    const admin = `adm_${randomBytes(24).toString('base64url')}`;
    // The API logs its ready line at info; the bench runs it at warn (no access log) and polls readiness.
    const apiChild = await startBenchApi({
      databaseUrl: database.connectionString,
      signerSocket: socket,
      adminToken: admin,
      port: apiPort,
      nodeFlags: childNodeFlags('src/api/main.ts'),
      imports: [LOOP_PROBE],
      env: { LOOP_PROBE_FILE: path.join(dir, 'api.probe') },
      // BENCH_API_STDOUT: a file for the API's standard output (what V8's --trace-gc* flags print there).
      stdout: process.env.BENCH_API_STDOUT ? fs.openSync(process.env.BENCH_API_STDOUT, 'w') : 'ignore',
    });
    children.push(apiChild);
    const api = `http://127.0.0.1:${apiPort}`;
    const post = benchPost(api);
    const minted = await post('/v1/treasury', admin, { owner_type: 'bench', owner_id: 'bench' });
    const apiKey = minted.body.api_key as string;
    process.stderr.write(`• creating ${WALLETS} wallets\n`);
    const walletIds = await createBenchWallets(post, apiKey, WALLETS);
    const payBody = benchPayBody(USDC, SELLER);
    // The load generator shares the two cores with what it measures: fixed requests over keep-alive sockets
    // (support/keep-alive-load-client.ts) cost it less CPU than node:http, leaving more to the service.
    /** Error codes of the answers other than 200, by phase and status (each code counted). */
    const failureCodes = new Map<string, Map<string, number>>();
    const client = new KeepAliveLoadClient({
      host: '127.0.0.1',
      port: apiPort,
      connections: CONCURRENCY,
      onFailedAnswer: (status, body) => {
        const key = `${phase} ${status}`;
        const code = /"error_code":"([a-z0-9_]{1,64})"/.exec(body)?.[1] ?? 'no code';
        const codes = failureCodes.get(key) ?? new Map<string, number>();
        codes.set(code, (codes.get(code) ?? 0) + 1);
        failureCodes.set(key, codes);
      },
    });
    const payPayload = Buffer.from(JSON.stringify(payBody));
    const payHeaders = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    /** Answers other than 200, by phase and status (0: the connection failed before an answer). */
    const failures = new Map<string, number>();
    let phase = 'warm-up';
    // As the SDK's TreasuryAccount asks for each signature: under an Idempotency-Key of its own, made as the SDK
    // makes it (BENCH_IDEMPOTENCY_KEYS=0: none).
    let bearerHeaders: Record<string, string> = payHeaders;
    const headersFor = IDEMPOTENCY_KEYS
      ? () => ({ ...bearerHeaders, 'idempotency-key': newIdempotencyKey('account') })
      : () => bearerHeaders;
    const payThrough = (via: KeepAliveLoadClient, suffix: string) => async (walletId: string) => {
      const status = await via.request('POST', `/v1/wallets/${walletId}/pay`, headersFor(), payPayload);
      const key = `${phase}${suffix} ${status}`;
      if (status !== 200) failures.set(key, (failures.get(key) ?? 0) + 1);
      return status === 200;
    };
    const payOnce = payThrough(client, '');
    // Warm-up, so that (a) measures a running service rather than a starting one: every wallet paid once (its
    // key unwrapped in the HSM and cached by the signer, its snapshot remembered by the API — measured: a first
    // payment costs the signer an unwrap and the API a read), then a few seconds of load for the JIT compilers
    // (measured: the API was still compiling during (a) after 2 s).
    process.stderr.write(
      FIRST_PAY_WARM_SECONDS > 0
        ? `• warm-up: ${FIRST_PAY_WARM_SECONDS} s over ${FIRST_PAY_WARM_WALLETS} wallets of its own, every wallet once, then 3 s\n`
        : '• warm-up: every wallet once, then 3 s\n',
    );
    const kernelThreads = kernelThreadPids();
    const sample = (): CpuSample => ({
      kernel: kernelThreadCpu(kernelThreads),
      api: processCpuSeconds(apiChild.pid),
      signer: processCpuSeconds(children[0]?.pid),
      self: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
      ...(({ busy, steal, iowait }) => ({ machine: busy, steal, iowait }))(machineSeconds()),
      pg: postgresProcessCpu(pgDataDir),
    });
    // A wallet's first payment by process (its key's unwrap and its first snapshot read are made when the wallet is),
    // on a pay path already compiled by payments from other wallets (FIRST_PAY_WARM_SECONDS).
    if (FIRST_PAY_WARM_SECONDS > 0) {
      const warmWallets = await createBenchWallets(post, apiKey, FIRST_PAY_WARM_WALLETS);
      await drive(CONCURRENCY, FIRST_PAY_WARM_SECONDS, (i) => payOnce(warmWallets[i % warmWallets.length]!));
    }
    const cpuBeforeFirst = sample();
    const firstPayments = await driveEach(CONCURRENCY, walletIds, payOnce);
    const cpuAfterFirst = sample();
    await drive(CONCURRENCY, 3, (i) => payOnce(walletIds[(i * 7919) % walletIds.length]!));
    // A running service has history: BENCH_HISTORY past payments (default 300,000 over 90 days; 0 for none), with
    // their audit rows and past spend windows (support/seed-payment-history.ts). Without it the tables hold a
    // few thousand rows and autovacuum analyzes authorizations every few seconds at 400/s (measured: a quarter
    // of the two cores for a second each time), where a running service's is analyzed every few minutes.
    // A running service's tables also have statistics (autovacuum analyzes them about once a minute); this database is
    // a minute old and has none, and the plans cached by the API's connections were made on near-empty tables
    // (measured: the signature record then scans all authorizations). Vacuum and analyze once, as autovacuum would
    // have (unvacuumed history would be vacuumed during (c): measured, 14 times the WAL per payment).
    let history: SeededHistory = { authorizations: 0, auditEvents: 0, spendWindows: 0 };
    {
      const client = new pg.Client(database.connectionString);
      await client.connect();
      const paid = Number(
        (await client.query<{ n: string }>(`SELECT count(*) AS n FROM authorizations WHERE status = 'signed'`)).rows[0]!
          .n,
      );
      const copies = Math.ceil(HISTORY / Math.max(1, paid));
      if (HISTORY > 0) {
        process.stderr.write(`• history: ${copies} past payments for each of the ${paid} so far, over 90 days\n`);
        history = await seedPaymentHistory(client, { copies, days: 90 });
      }
      process.stderr.write('• VACUUM ANALYZE (what autovacuum does on a running service)\n');
      await client.query('VACUUM ANALYZE');
      await client.end();
    }
    process.stderr.write(`• pay (a): ${WALLETS} wallets, ${CONCURRENCY} concurrent, ${SECONDS} s\n`);
    const scrape = async () => (await fetch(`${api}/metrics`)).text();
    const metricsBeforeSpread = await scrape();
    const threads = () => ({ api: readProcessThreads(apiChild.pid), signer: readProcessThreads(children[0]?.pid) });
    const threadsBefore = threads();
    const cpuBefore = sample();
    phase = '(a)';
    const spread = await drive(CONCURRENCY, SECONDS, (i) => payOnce(walletIds[(i * 7919) % walletIds.length]!));
    const cpuAfter = sample();
    const threadsAfter = threads();
    const metricsAfterSpread = await scrape();
    process.stderr.write(`• pay (b): one hot wallet, ${CONCURRENCY} concurrent, ${SECONDS} s\n`);
    phase = '(b)';
    const hot = await drive(CONCURRENCY, SECONDS, () => payOnce(walletIds[0]!));
    const cpuAfterHot = sample();
    const threadsAfterHot = threads();
    const metricsAfterHot = await scrape();
    // The second check's cost in this run: the same pays through a second API whose signer keeps no store, in
    // alternating one-second slices (./support/store-cost-ab.ts). Its processes run until the signed phases' turn.
    const storeCost: Partial<Record<'spread' | 'hot' | 'signedSpread' | 'signedHot', StoreCostComparison>> = {};
    // CPU of the services only (both APIs and signers, PostgreSQL's processes): the load generator's is the same for
    // both paths, and anything else the machine runs meanwhile is not the payments'.
    const busyCpu = () =>
      children.reduce((t, c) => t + processCpuSeconds(c.pid), 0) +
      Object.values(postgresProcessCpu(pgDataDir)).reduce((t, v) => t + v, 0);
    // The same, by role: each path's API and signer (the bench's own and the second path's) and PostgreSQL.
    const roles = new Map<ChildProcess, 'API' | 'signer'>([
      [children[0]!, 'signer'],
      [apiChild, 'API'],
    ]);
    const busyParts = () => {
      const parts: Record<string, number> = { API: 0, signer: 0 };
      for (const [child, role] of roles) parts[role] = parts[role]! + processCpuSeconds(child.pid);
      // PostgreSQL by where its work comes from: the signer store's connections, the APIs', and the rest (WAL
      // writer, checkpointer, autovacuum, exited processes…).
      parts['PG signer'] = 0;
      parts['PG API'] = 0;
      parts['PG rest'] = 0;
      for (const [role, seconds] of Object.entries(postgresProcessCpu(pgDataDir, true))) {
        const key =
          role === 'backends treasury_signer' ? 'PG signer' : role.startsWith('backends') ? 'PG API' : 'PG rest';
        parts[key] = parts[key]! + seconds;
      }
      return parts;
    };
    // The store's statements that write spends (pg_stat_statements over the signer's database), per comparison.
    const storeStats = new pg.Client(database.connectionString);
    await storeStats.connect();
    await storeStats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const storeStatements = async () => {
      const { rows } = await storeStats.query<{ calls: number; ms: number; allCalls: number; allMs: number }>(
        `SELECT coalesce(sum(calls) FILTER (WHERE s.query LIKE '%INSERT INTO signer_spends%'), 0)::float8 AS calls,
                coalesce(sum(total_exec_time) FILTER (WHERE s.query LIKE '%INSERT INTO signer_spends%'), 0)::float8 AS ms,
                coalesce(sum(calls), 0)::float8 AS "allCalls", coalesce(sum(total_exec_time), 0)::float8 AS "allMs"
           FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
          WHERE d.datname = 'treasury_signer'`,
      );
      return rows[0]!;
    };
    let storeOff: Awaited<ReturnType<typeof startStoreOffPath>> | undefined;
    if (approver) {
      process.stderr.write("• the store's cost: a second API and signer without the store, alternating slices\n");
      phase = 'store off warm-up';
      storeOff = await startStoreOffPath({
        walletIds,
        concurrency: CONCURRENCY,
        start: async () => {
          const offSocket = path.join(dir, 'signer-off.sock');
          const offSigner = await startChild('signer/main.ts', signerEnv(offSocket, false), 'signer ready');
          children.push(offSigner);
          roles.set(offSigner, 'signer');
          const offPort = await freePort();
          const offApi = await startBenchApi({
            databaseUrl: database.connectionString,
            signerSocket: offSocket,
            adminToken: admin,
            port: offPort,
            nodeFlags: childNodeFlags('src/api/main.ts'),
          });
          children.push(offApi);
          roles.set(offApi, 'API');
          const offClient = new KeepAliveLoadClient({ host: '127.0.0.1', port: offPort, connections: CONCURRENCY });
          return {
            children: [offSigner, offApi],
            payOnce: payThrough(offClient, ' store off'),
            close: () => offClient.close(),
          };
        },
      });
      phase = '(a) store on/off';
      storeCost.spread = await storeOff.compare(payOnce, {
        rounds: STORE_ROUNDS,
        sample: busyCpu,
        parts: busyParts,
        store: storeStatements,
      });
      phase = '(b) store on/off';
      storeCost.hot = await storeOff.compare(payOnce, {
        rounds: STORE_ROUNDS,
        hot: true,
        sample: busyCpu,
        parts: busyParts,
        store: storeStatements,
      });
    }
    process.stderr.write(`• pay (c): ${WALLETS} wallets, steady ${STEADY_RATE} pays/s offered, ${SECONDS} s\n`);
    // A running server recycles its WAL: each checkpoint renames the segments it no longer needs into the next
    // ones. A database a minute old has none to recycle, so each new 16 MB segment is created by writing 16 MB of
    // zeros and syncing them while commits wait (measured in (c) without this checkpoint: both group-commit
    // statements stalled 28–109 ms at once, two to four times in 8 s, enough alone to put p99 above 20 ms).
    // Checkpoint once, as a running server has, so that (c) measures the service rather than a young database.
    {
      const client = new pg.Client(database.connectionString);
      await client.connect();
      await client.query('CHECKPOINT');
      await client.end();
    }
    // The floor of (c): the same hand-offs at the same rate with none of a payment's work
    // (support/steady-floor.ts), measured just before (c), so that its tail can be read against the machine's.
    process.stderr.write(
      `• baseline: the steady floor (a payment's hand-offs, ${FLOOR_BUSY ? 'busy work' : 'no work'}), ${CONCURRENCY} concurrent for ${Math.min(SECONDS, 5)} s, then ${STEADY_RATE}/s offered, ${SECONDS} s\n`,
    );
    const floor = await startSteadyFloor({
      connectionString: database.connectionString,
      port: await freePort(),
      cwd: ROOT,
      workMicros: FLOOR_WORK,
    });
    const floorClient = new KeepAliveLoadClient({ host: '127.0.0.1', port: floor.port, connections: CONCURRENCY });
    const floorSample = () => ({
      machine: machineSeconds().busy,
      front: processCpuSeconds(floor.pid),
      echo: processCpuSeconds(floor.echoPid),
      postgres: Object.values(postgresProcessCpu(pgDataDir)).reduce((t, v) => t + v, 0),
      load: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    });
    let steadyFloor: Result;
    let floorCpu: { machine: number; floor: number; busy: number };
    let floorAtSaturation: FloorDrive;
    let floorAtPayRate: FloorDrive;
    try {
      const floorOnce = async () => (await floorClient.request('POST', '/pay', payHeaders, payPayload)) === 200;
      /** The floor's CPU a request by part over one drive of it. */
      const floorParts = async (run: () => Promise<Result>): Promise<FloorDrive> => {
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
      floorAtSaturation = await floorParts(() => drive(CONCURRENCY, Math.min(SECONDS, 5), floorOnce));
      floorAtPayRate = await floorParts(() => driveAtRate(rate(spread), Math.min(SECONDS, 5), 256, floorOnce));
      await driveAtRate(STEADY_RATE, 2, 256, floorOnce);
      const before = floorSample();
      steadyFloor = await driveAtRate(STEADY_RATE, SECONDS, 256, floorOnce);
      const after = floorSample();
      floorCpu = {
        machine: ((after.machine - before.machine) / steadyFloor.ops) * 1e6,
        floor: ((after.front - before.front + after.echo - before.echo) / steadyFloor.ops) * 1e6,
        busy: (after.machine - before.machine) / steadyFloor.seconds / 2,
      };
    } finally {
      floorClient.close();
      floor.stop();
    }
    // Steady state: the saturation phases leave work behind (autovacuum, queued records), and after a checkpoint
    // each page's first change writes its full image (a running server's burst once per checkpoint_timeout,
    // 5 min: measured, 7–8 MB more WAL in (c) when only 2 s were left before it, none after 5 s). The first 5 s at
    // the offered rate are not measured.
    phase = '(c) unmeasured';
    await driveAtRate(STEADY_RATE, 5, 256, (i) => payOnce(walletIds[(i * 7919) % walletIds.length]!));
    const metricsBeforeSteady = await (await fetch(`${api}/metrics`)).text();
    const statements = new pg.Client(database.connectionString);
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
    const threadsBeforeSteady = threads();
    const cpuBeforeSteady = sample();
    const pageCacheBefore = pageCacheCounters();
    // One CPU sample per second of (c), to set each second's tail beside what the machine was doing then.
    const steadySeconds: CpuSample[] = [cpuBeforeSteady];
    const ticker = setInterval(() => steadySeconds.push(sample()), 1000);
    phase = '(c)';
    const steady = await driveAtRate(STEADY_RATE, SECONDS, 256, (i) =>
      payOnce(walletIds[(i * 7919) % walletIds.length]!),
    );
    clearInterval(ticker);
    const cpuAfterSteady = sample();
    const threadsAfterSteady = threads();
    const pageCacheAfter = pageCacheCounters();
    steadySeconds.push(cpuAfterSteady);
    const statementRows = (
      await statements.query<{
        query: string;
        calls: string;
        exec_ms: number;
        plan_ms: number;
        plans: string;
        wal_records: string;
        wal_fpi: string;
        blks_read: string;
        read_ms: number;
      }>(
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
    const metrics = await (await fetch(`${api}/metrics`)).text();

    // (a) and (b) again, every bench wallet's policy now signed by the approver: the signer's locked path.
    let signedPhases: { spread: Result; hot: Result; cpu: [CpuSample, CpuSample, CpuSample] } | undefined;
    if (approver) {
      process.stderr.write(`• signing the ${WALLETS} wallets' policies, then (a) and (b) again\n`);
      await signBenchPolicies(api, apiKey, walletIds, approver, BENCH_WALLET_POLICY);
      phase = '(a, signed) warm-up';
      await drive(CONCURRENCY, 2, (i) => payOnce(walletIds[(i * 7919) % walletIds.length]!));
      phase = '(a, signed)';
      const cpuBeforeSigned = sample();
      const spreadSigned = await drive(CONCURRENCY, SECONDS, (i) => payOnce(walletIds[(i * 7919) % walletIds.length]!));
      const cpuAfterSpreadSigned = sample();
      phase = '(b, signed)';
      const hotSigned = await drive(CONCURRENCY, SECONDS, () => payOnce(walletIds[0]!));
      signedPhases = { spread: spreadSigned, hot: hotSigned, cpu: [cpuBeforeSigned, cpuAfterSpreadSigned, sample()] };
      if (storeOff) {
        phase = 'store off warm-up, signed';
        await storeOff.warm();
        phase = '(a, signed) store on/off';
        storeCost.signedSpread = await storeOff.compare(payOnce, {
          rounds: STORE_ROUNDS,
          sample: busyCpu,
          parts: busyParts,
          store: storeStatements,
        });
        phase = '(b, signed) store on/off';
        storeCost.signedHot = await storeOff.compare(payOnce, {
          rounds: STORE_ROUNDS,
          hot: true,
          sample: busyCpu,
          parts: busyParts,
          store: storeStatements,
        });
      }
    }
    await storeOff?.stop();
    await storeStats.end();

    // (d) A buyer agent paying through its PAT with a daily cap across the agent's wallets: decided on the day's
    // total the API remembers (read once under the PAT's lock) and group-committed as in (a), the total held to
    // the cap by PostgreSQL (docs/adr/0006). Measured after everything above, so it changes none of it.
    process.stderr.write(
      `• pay (d): one agent's PAT with a daily cap, ${PAT_WALLETS} wallets, ${CONCURRENCY} concurrent, ${SECONDS} s\n`,
    );
    const capped = await (async () => {
      // A SIWE sign-in of a fresh key, its nonce asked of the API (test/support/sign-in.ts).
      const nonceApi = {
        request: async (method: string, route: string) => {
          const res = await fetch(api + route, { method });
          return { status: res.status, body: await res.json() };
        },
      };
      const init = await fetch(`${api}/v1/identity/init`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(await signInBody(nonceApi, api)),
      });
      if (init.status !== 200 && init.status !== 201)
        throw new Error(`bench: sign-in failed (${init.status}): ${await init.text()}`);
      const session = ((await init.json()) as { session: string }).session;
      const treasuryPat = (await post('/v1/pats', session, { scope_type: 'treasury' })).body.pat as string;
      const agentPat = (await post('/v1/pats', session, { scope_type: 'agent', daily_cap_usd: '1000000' })).body
        .pat as string;
      const agentWallets: string[] = [];
      for (let i = 0; i < PAT_WALLETS; i++) {
        const made = await post('/v1/wallets', treasuryPat, { policy: BENCH_WALLET_POLICY });
        if (made.status !== 201)
          throw new Error(`bench: agent wallet ${i + 1} answered ${made.status}: ${JSON.stringify(made.body)}`);
        agentWallets.push(made.body.id as string);
      }
      bearerHeaders = { ...payHeaders, authorization: `Bearer ${agentPat}` };
      phase = '(d) warm-up';
      await driveEach(CONCURRENCY, agentWallets, payOnce);
      await drive(CONCURRENCY, 2, (i) => payOnce(agentWallets[i % agentWallets.length]!));
      phase = '(d)';
      const before = await scrape();
      const result = await drive(CONCURRENCY, SECONDS, (i) => payOnce(agentWallets[i % agentWallets.length]!));
      return { result, before, after: await scrape() };
    })();
    client.close();
    const avgMs = (name: string, labels: string) => {
      const sum = Number(metrics.match(new RegExp(`${name}_sum\\{${labels}\\} ([0-9.e+-]+)`))?.[1]);
      const count = Number(metrics.match(new RegExp(`${name}_count\\{${labels}\\} ([0-9.e+-]+)`))?.[1]);
      return ((sum / count) * 1000).toFixed(2);
    };
    const breakdown = `inside the API, per pay on average: decision ${avgMs('treasury_db_transaction_duration_seconds', 'operation="pay"')} ms, write of the signature ${avgMs('treasury_db_transaction_duration_seconds', 'operation="pay_record"')} ms, signer call ${avgMs('treasury_signer_call_duration_seconds', 'method="sign_transfer_authorization"')} ms; whole request ${avgMs('treasury_http_request_duration_seconds', 'method="POST",route="/v1/wallets/:id/pay"')} ms (all phases; payments per statement: the per-phase line)`;
    /** A series' value in one scrape (0 when absent); `series` is the name with its labels, as exposed. */
    const seriesValue = (text: string, series: string) => {
      const at = text.indexOf(`\n${series} `);
      return at < 0 ? 0 : Number(text.slice(at + series.length + 2, text.indexOf('\n', at + 1)));
    };
    /** Per phase: where reservations took their snapshot, and how many payments shared a write or a record statement. */
    const phaseLine = (label: string, before: string, after: string, ops: number) => {
      const delta = (series: string) => seriesValue(after, series) - seriesValue(before, series);
      const perStatement = (histogram: string) =>
        (delta(`${histogram}_sum`) / Math.max(1, delta(`${histogram}_count`))).toFixed(2);
      const read = delta('treasury_pay_snapshots_total{source="read"}');
      const remembered = delta('treasury_pay_snapshots_total{source="remembered"}');
      // A capped PAT's total: checked on what this process remembers, or read under the PAT's lock (decided alone).
      const patRead = delta('treasury_pat_cap_checks_total{source="read"}');
      const patRemembered = delta('treasury_pat_cap_checks_total{source="remembered"}');
      const pat =
        patRead + patRemembered > 0
          ? `; the PAT's cap checked on its remembered total ${((patRemembered / ops) * 100).toFixed(0)} %, under its lock ${((patRead / ops) * 100).toFixed(0)} %`
          : '';
      const retries = delta('treasury_pay_conflict_retries_total{kind="pay"}');
      return `${label}: snapshots read ${((read / ops) * 100).toFixed(0)} %, remembered ${((remembered / ops) * 100).toFixed(0)} %; decisions per write statement ${perStatement('treasury_pay_decision_write_batch_size')}, signatures per record statement ${perStatement('treasury_pay_signature_record_batch_size')}${pat}${retries > 0 ? `; taken again ${retries}` : ''}`;
    };
    const phasesLine = `per phase: ${[phaseLine('(a)', metricsBeforeSpread, metricsAfterSpread, spread.ops), phaseLine('(b)', metricsAfterSpread, metricsAfterHot, hot.ops), phaseLine('(c)', metricsBeforeSteady, metrics, steady.ops), phaseLine('(d)', capped.before, capped.after, capped.result.ops)].join('; ')}`;
    /** The p99 bucket bound of a histogram series over phase (c) only (difference of two scrapes). */
    const p99InSteady = (name: string, labels: string) => {
      const buckets = (text: string) =>
        [
          ...text.matchAll(
            new RegExp(`${name}_bucket\\{(?:le="([^"]+)",${labels}|${labels},le="([^"]+)")\\} ([0-9.e+-]+)`, 'g'),
          ),
        ].map((m) => ({ le: (m[1] ?? m[2])!, n: Number(m[3]) }));
      const after = buckets(metrics);
      const before = new Map(buckets(metricsBeforeSteady).map((b) => [b.le, b.n]));
      const diff = after.map((b) => ({ le: b.le, n: b.n - (before.get(b.le) ?? 0) }));
      const total = diff.at(-1)?.n ?? 0;
      const hit = diff.find((b) => b.n >= total * 0.99);
      const sum = (text: string) => Number(text.match(new RegExp(`${name}_sum\\{${labels}\\} ([0-9.e+-]+)`))?.[1] ?? 0);
      const mean = total > 0 ? (((sum(metrics) - sum(metricsBeforeSteady)) / total) * 1000).toFixed(1) : '?';
      return `${hit ? (hit.le === '+Inf' ? '>max' : `≤${(Number(hit.le) * 1000).toFixed(0)}`) : '?'} (mean ${mean})`;
    };
    const tailLine = `p99 inside the API in (c), ms (histogram bucket bounds; mean): decision ${p99InSteady('treasury_db_transaction_duration_seconds', 'operation="pay"')}, signer call ${p99InSteady('treasury_signer_call_duration_seconds', 'method="sign_transfer_authorization"')}, write of the signature ${p99InSteady('treasury_db_transaction_duration_seconds', 'operation="pay_record"')}, whole request ${p99InSteady('treasury_http_request_duration_seconds', 'method="POST",route="/v1/wallets/:id/pay"')}`;
    /**
     * The tail's shape in (c): the p99 of each second's requests. A tail made by a few stalls (a long garbage
     * collection, the hypervisor taking the CPUs) shows as a few bad seconds among good ones; one made by
     * running too close to saturation shows in every second.
     */
    const secondsP99 = (steady.bySecond ?? []).filter((l) => l.length > 0).map((l) => percentile(l, 99));
    const sortedSecondsP99 = [...secondsP99].sort((a, b) => a - b);
    const bySecondLine = `p99 of each second's requests in (c), ms: ${
      secondsP99.length <= 12
        ? secondsP99.map((v) => v.toFixed(0)).join(', ')
        : `best ${sortedSecondsP99[0]!.toFixed(0)}, median ${percentile(sortedSecondsP99, 50).toFixed(0)}, worst ${sortedSecondsP99.at(-1)!.toFixed(0)}`
    } (≤ 20 ms in ${secondsP99.filter((v) => v <= 20).length} of ${secondsP99.length} seconds)`;
    /** Each second of (c): the machine's busy share, PostgreSQL's own upkeep in it (all but client backends), time waiting on the disk, the hypervisor's share. */
    const secondShares = steadySeconds.slice(1).map((after, i) => {
      const before = steadySeconds[i]!;
      const pgUpkeep = Object.keys(after.pg)
        .filter((role) => role !== 'backends')
        .reduce((sum, role) => sum + (after.pg[role] ?? 0) - (before.pg[role] ?? 0), 0);
      const pct = (seconds: number) => ((seconds / 2) * 100).toFixed(0);
      return `${pct(after.machine - before.machine)}/${pct(pgUpkeep)}/${pct(kernelThreadSeconds(before, after))}/${pct(after.iowait - before.iowait)}/${pct(after.steal - before.steal)}`;
    });
    const busyBySecondLine = `each second of (c), % of the two cores — busy / PostgreSQL upkeep (autovacuum, WAL writer, checkpointer…) / the kernel's own threads / waiting on the disk (iowait) / stolen by the hypervisor: ${secondShares.join(', ')}`;
    /** The kernel's own threads over (c) by kind, and the memory monitors (DAMON) that wake on a timer. */
    const kernelShares = Object.keys(cpuAfterSteady.kernel)
      .map(
        (kind) =>
          [
            kind,
            ((cpuAfterSteady.kernel[kind] ?? 0) - (cpuBeforeSteady.kernel[kind] ?? 0)) / steady.seconds / 2,
          ] as const,
      )
      .filter(([, share]) => share >= 0.001)
      .sort((a, b) => b[1] - a[1]);
    const damon = runningDamonMonitors();
    const kernelLine = `the kernel's own threads in (c), % of the two cores: ${kernelShares.length === 0 ? 'none above 0.1' : kernelShares.map(([kind, share]) => `${kind} ${(share * 100).toFixed(1)}`).join(', ')}; DAMON memory monitors running: ${
      damon.length === 0
        ? 'none'
        : damon
            .map(
              (m) =>
                `${m.name} (samples every ${m.sampleMs} ms, aggregates every ${m.aggregateMs} ms; schemes: ${m.actions.join(', ') || 'none'})`,
            )
            .join(', ')
    }`;
    const bursts = slowRequestBursts(steady.timed ?? [], 20);
    // The API's and the signer's event loops and collections beside (c)'s slow requests (./support/tail-timeline.ts).
    const stalls = tailTimeline({
      startedAtEpochMs: steady.startedAtEpochMs,
      requests: steady.timed,
      processes: [
        { name: 'API', slices: readProbeSlices(path.join(dir, 'api.probe')) },
        { name: 'signer', slices: readProbeSlices(`${socket}.probe`) },
      ],
      pg: [],
      sliceMs: PROBE_SLICE_MS,
      maxBursts: 6,
    });
    const burstLine = `requests over 20 ms in (c): ${bursts.slow} of ${steady.ops + steady.errors}, in ${bursts.bursts.length} bursts (./support/slow-request-bursts.ts: slow requests less than 100 ms apart); median gap between bursts' starts ${Number.isNaN(bursts.medianGapMs) ? '–' : `${bursts.medianGapMs.toFixed(0)} ms`} (a regular gap names a periodic cause, e.g. a monitor's sampling period above)`;
    const floorBursts = slowRequestBursts(steadyFloor.timed ?? [], 20);
    const floorLine = `the steady floor, just before (c) (./support/steady-floor.ts: an HTTP front, an echo process over a unix socket, one group-committed insert; ${FLOOR_BUSY ? `${FLOOR_WORK.front} and ${FLOOR_WORK.echo} µs of busy work per request in the front and the echo (BENCH_FLOOR_WORK_US)` : "none of a payment's work"}): p50 ${percentile(steadyFloor.latenciesMs, 50).toFixed(1)} ms, p99 ${percentile(steadyFloor.latenciesMs, 99).toFixed(1)} ms, ${floorBursts.slow} of ${steadyFloor.ops + steadyFloor.errors} requests over 20 ms in ${floorBursts.bursts.length} bursts; its processes ${floorCpu.floor.toFixed(0)} µs and the machine ${floorCpu.machine.toFixed(0)} µs of CPU per request, ${(floorCpu.busy * 100).toFixed(0)}% busy. (c)'s p99 is ${(percentile(steady.latenciesMs, 99) / percentile(steadyFloor.latenciesMs, 99)).toFixed(1)} × the floor's (a floor over 20 ms: this machine, not the service, misses the target)`;
    const perSteadyPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
      (((cpuAfterSteady[k] - cpuBeforeSteady[k]) / steady.ops) * 1e6).toFixed(0);
    const perPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
      (((cpuAfter[k] - cpuBefore[k]) / spread.ops) * 1e6).toFixed(0);
    const rest = ((beyondServices(cpuBefore, cpuAfter) / spread.ops) * 1e6).toFixed(0);
    const perHotPay = (k: Exclude<keyof CpuSample, 'pg' | 'kernel'>) =>
      (((cpuAfterHot[k] - cpuAfter[k]) / hot.ops) * 1e6).toFixed(0);
    const restHot = ((beyondServices(cpuAfter, cpuAfterHot) / hot.ops) * 1e6).toFixed(0);
    /** Share of the two cores' time the hypervisor took between two samples. */
    const stealShare = (before: CpuSample, after: CpuSample, seconds: number) =>
      (after.steal - before.steal) / seconds / 2;
    const [stolenA, stolenC] = [
      stealShare(cpuBefore, cpuAfter, spread.seconds),
      stealShare(cpuBeforeSteady, cpuAfterSteady, steady.seconds),
    ];
    const stolen = Math.max(stolenA, stolenC);
    // Steal above a few percent: the vCPUs waited for the host; per-process CPU then counts some of that wait
    // (so "the rest" can come out negative), and throughput and ceilings move from run to run.
    const stealWarning =
      stolen > 0.05
        ? `note: the hypervisor took ${(stolen * 100).toFixed(0)} % of this machine's CPU time in (a) or (c); this run's figures are not comparable with a quiet run's`
        : '';
    const steadyMachinePerPay = ((cpuAfterSteady.machine - cpuBeforeSteady.machine) / steady.ops) * 1e6;
    const saturatedMachinePerPay = ((cpuAfter.machine - cpuBefore.machine) / spread.ops) * 1e6;
    const wakeUpLine = `hand-offs on this machine (./support/wake-up-cost.ts: a 200-byte message and its echo between two idle processes, machine CPU per round trip): ${wakeUps.backToBackMicros.toFixed(0)} µs back to back, ${wakeUps.pacedMicros.toFixed(0)} µs at ${STEADY_RATE}/s (${(wakeUps.pacedMicros / wakeUps.backToBackMicros).toFixed(1)}×). A payment is handed over six to eight times; machine CPU per pay: ${saturatedMachinePerPay.toFixed(0)} µs in (a), ${steadyMachinePerPay.toFixed(0)} µs in (c) (${(steadyMachinePerPay / saturatedMachinePerPay).toFixed(1)}×)`;
    const postgresLine = `PostgreSQL's processes per pay, µs (what "the rest" above holds): in (a) ${postgresShare(cpuBefore, cpuAfter, spread.ops)}; in (c) ${postgresShare(cpuBeforeSteady, cpuAfterSteady, steady.ops)}`;
    const perFirstPay = (k: 'api' | 'signer') =>
      (((cpuAfterFirst[k] - cpuBeforeFirst[k]) / firstPayments.ops) * 1e6).toFixed(0);
    const firstLine = `CPU per first payment of a wallet, µs: API ${perFirstPay('api')}, signer ${perFirstPay('signer')}; ${postgresShare(cpuBeforeFirst, cpuAfterFirst, firstPayments.ops)}; machine total ${(((cpuAfterFirst.machine - cpuBeforeFirst.machine) / firstPayments.ops) * 1e6).toFixed(0)}`;
    const cpuLine = `signer process alone: ${signerCpuPerSign.toFixed(0)} µs CPU per signature. CPU per pay in (a), µs: API ${perPay('api')}, signer ${perPay('signer')}, load generator ${perPay('self')}, PostgreSQL and the rest ${rest}; machine total ${perPay('machine')} (2 cores busy = ${(2e6 / rate(spread)).toFixed(0)}), ${(stolenA * 100).toFixed(0)}% stolen by the hypervisor; in (b): API ${perHotPay('api')}, signer ${perHotPay('signer')}, load generator ${perHotPay('self')}, PostgreSQL and the rest ${restHot}; machine total ${perHotPay('machine')}; in (c): API ${perSteadyPay('api')}, signer ${perSteadyPay('signer')}, load generator ${perSteadyPay('self')}, machine total ${perSteadyPay('machine')}, ${(((cpuAfterSteady.machine - cpuBeforeSteady.machine) / steady.seconds / 2) * 100).toFixed(0)}% busy, ${(stolenC * 100).toFixed(0)}% stolen by the hypervisor`;
    // Each service's main thread apart from its other threads (the signer's HSM threads among them): CPU, sleeps
    // (each one a wake-up some other thread or process must make) and preemptions a payment (./support/thread-switches.ts).
    const threadPhases = [
      ['(a)', threadsBefore, threadsAfter, spread.ops],
      ['(b)', threadsAfter, threadsAfterHot, hot.ops],
      ['(c)', threadsBeforeSteady, threadsAfterSteady, steady.ops],
    ] as const;
    const threadLines = threadPhases.flatMap(([label, before, after, ops]) => {
      const parts = (['api', 'signer'] as const)
        .map((k) => threadsLine(k === 'api' ? 'API' : 'signer', threadsPerOp(before[k], after[k], ops)))
        .filter(Boolean);
      return parts.length > 0 ? [`  ${label}: ${parts.join('; ')}`] : [];
    });
    /** The signed phases' CPU a payment by process, as (a)'s and (b)'s above: where the signer's second check costs. */
    const perPhasePay = (before: CpuSample, after: CpuSample, ops: number) => {
      const p = partsPerPay(before, after, ops);
      const restOf = ((beyondServices(before, after) / ops) * 1e6).toFixed(0);
      return `API ${p.front.toFixed(0)}, signer ${p.hop.toFixed(0)}, PostgreSQL and the rest ${restOf}; machine total ${p.machine.toFixed(0)}`;
    };
    const signedCpuLine = signedPhases
      ? `CPU per pay on the signed path, µs: in (a, signed): ${perPhasePay(signedPhases.cpu[0], signedPhases.cpu[1], signedPhases.spread.ops)}; in (b, signed): ${perPhasePay(signedPhases.cpu[1], signedPhases.cpu[2], signedPhases.hot.ops)}`
      : '';
    /** The API's garbage collection in phase (c): count and total time per kind (prom-client default metrics). */
    /** The API's garbage collections between two scrapes: count and total time per kind, and per 1,000 payments (prom-client default metrics). */
    const gcBetween = (before: string, after: string, ops: number) =>
      ['minor', 'major', 'incremental']
        .map((kind) => {
          const read = (text: string, what: 'sum' | 'count') =>
            Number(
              text.match(
                new RegExp(`treasury_nodejs_gc_duration_seconds_${what}\\{kind="${kind}"\\} ([0-9.e+-]+)`),
              )?.[1] ?? 0,
            );
          const n = read(after, 'count') - read(before, 'count');
          const ms = (read(after, 'sum') - read(before, 'sum')) * 1000;
          return `${kind} ${n} (${ms.toFixed(0)} ms; ${((n / Math.max(1, ops)) * 1000).toFixed(1)} per 1,000 pays)`;
        })
        .join(', ');
    const gcInSteady = gcBetween(metricsBeforeSteady, metrics, steady.ops);
    const gcInSaturation = gcBetween(metricsBeforeSpread, metricsAfterHot, spread.ops + hot.ops);
    /** PostgreSQL's side of phase (c), per pay, for its costliest statements (pg_stat_statements). */
    const statementLine = `PostgreSQL in (c), per pay (pg_stat_statements): ${statementRows
      .map((r) => {
        const per = (v: number) => v / steady.ops;
        const name = /^WITH l AS/.test(r.query)
          ? 'decision write'
          : /^UPDATE authorizations/.test(r.query)
            ? 'signature record'
            : r.query.replace(/\s+/g, ' ').slice(0, 40);
        return `${name}: ${per(Number(r.calls)).toFixed(2)} statements, execution ${(per(r.exec_ms) * 1000).toFixed(0)} µs, planning ${(per(r.plan_ms) * 1000).toFixed(0)} µs (${r.plans} plans), ${per(Number(r.wal_records)).toFixed(1)} WAL records (${per(Number(r.wal_fpi)).toFixed(2)} of them full-page images), ${r.blks_read} pages read from outside shared buffers in all (${r.read_ms.toFixed(0)} ms)`;
      })
      .join('; ')}`;
    const { header, rule, row } = resultTable(44, 54);
    const lines = [
      '',
      `Treasury pay benchmark — ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
      `the signer and the API run ${benchCode() === 'dist' ? 'compiled (dist/, as production runs them)' : 'from the TypeScript sources through tsx (no current build: `npm run build` for the compiled code production runs; BENCH_CODE)'}`,
      `database history before measuring: ${history.authorizations.toLocaleString('en-US')} past payments, ${history.auditEvents.toLocaleString('en-US')} audit rows, ${history.spendWindows.toLocaleString('en-US')} past spend windows (BENCH_HISTORY)`,
      `each payment ${IDEMPOTENCY_KEYS ? 'under an Idempotency-Key of its own, as the SDK sends (BENCH_IDEMPOTENCY_KEYS=0: none)' : 'without an Idempotency-Key (BENCH_IDEMPOTENCY_KEYS=0)'}`,
      '',
      header,
      rule,
      row('ceiling: SoftHSM sign via backend (8 loops)', hsm, []),
      row('ceiling: signer process via socket (8 loops)', signerAlone, []),
      ...(signerStore
        ? [
            row('signer via socket, alternating: no store', signerStore.bare, []),
            row('  … with the store, wallet without policy', signerStore.unsigned, [['no store', signerStore.bare]]),
            row('  … with the store, signed policy', signerStore.signed, [['no store', signerStore.bare]]),
          ]
        : []),
      row('ceiling: PG lock+insert, 1,000 keys (16 cl.)', dbSpread, []),
      row('ceiling: PG lock+insert, one key (16 cl.)', dbHot, []),
      row(`first pay of each of ${WALLETS} wallets (${CONCURRENCY} cl.)`, firstPayments, [
        ['HSM', hsm],
        ['signer', signerAlone],
        ['PG', dbSpread],
      ]),
      row(`pay via HTTP, ${WALLETS} wallets (${CONCURRENCY} cl.)`, spread, [
        ['HSM', hsm],
        ['signer', signerAlone],
        ['PG', dbSpread],
      ]),
      row(`pay via HTTP, one hot wallet (${CONCURRENCY} cl.)`, hot, [
        ['HSM', hsm],
        ['signer', signerAlone],
        ['PG hot', dbHot],
      ]),
      ...(signedPhases
        ? [
            row(`pay via HTTP, ${WALLETS} signed wallets (${CONCURRENCY} cl.)`, signedPhases.spread, [
              ['HSM', hsm],
              ['signer', signerAlone],
              ['PG', dbSpread],
            ]),
            row(`pay via HTTP, one hot signed wallet (${CONCURRENCY} cl.)`, signedPhases.hot, [
              ['HSM', hsm],
              ['signer', signerAlone],
              ['PG hot', dbHot],
            ]),
          ]
        : []),
      row(`floor: hand-offs, ${FLOOR_BUSY ? 'busy work' : 'no work'}, ${STEADY_RATE}/s offered`, steadyFloor, []),
      row(`pay via HTTP, ${WALLETS} wallets, ${STEADY_RATE}/s offered`, steady, [
        ['HSM', hsm],
        ['signer', signerAlone],
        ['PG', dbSpread],
      ]),
      row(`agent PAT, daily cap, ${PAT_WALLETS} wallets (${CONCURRENCY} cl.)`, capped.result, [
        ['HSM', hsm],
        ['signer', signerAlone],
        ['PG hot', dbHot],
      ]),
      '',
      ...(stealWarning ? [stealWarning, ''] : []),
      ...storeCostLines(storeCost),
      breakdown,
      phasesLine,
      cpuLine,
      ...(threadLines.length > 0
        ? [
            'by thread, a payment (./support/thread-switches.ts; a sleep is a wake-up someone else makes):',
            ...threadLines,
          ]
        : []),
      ...(signedCpuLine ? [signedCpuLine] : []),
      signerRatioBoundLine(ratioBound, rate(signerAlone) / rate(hsm), signerCpuPerSign),
      payRatioBoundLine(
        payRatioBound(floorAtSaturation, ratioBound, rate(hsm), os.cpus().length),
        [
          ['(a)', rate(spread) / rate(hsm)],
          ['(b)', rate(hot) / rate(hsm)],
          ...(signedPhases
            ? ([
                ['(a, signed)', rate(signedPhases.spread) / rate(hsm)],
                ['(b, signed)', rate(signedPhases.hot) / rate(hsm)],
              ] as const)
            : []),
        ],
        { label: '(a)', micros: partsPerPay(cpuBefore, cpuAfter, spread.ops), floor: floorAtPayRate },
      ),
      firstLine,
      wakeUpLine,
      `wake placement (./support/wake-placement.ts: a process woken by a socket write while the writer runs on for 1 ms, the other core idle): on the writer's core in ${(placement.onWritersCore * 100).toFixed(0)} % of ${placement.wakes} wake-ups; it started p50 ${placement.p50Micros.toFixed(0)} µs, p90 ${placement.p90Micros.toFixed(0)} µs after the write`,
      postgresLine,
      tailLine,
      bySecondLine,
      busyBySecondLine,
      kernelLine,
      burstLine,
      `the API's and the signer's event loops in (c) (./support/loop-probe.ts, ${PROBE_SLICE_MS} ms slices; each burst of slow requests with the longest loop stall and the collections in its window):`,
      ...stalls.map((l) => `  ${l}`),
      floorLine,
      statementLine,
      `page cache in (c): ${pageCacheAfter.refaults - pageCacheBefore.refaults} file pages read again after eviction, ${pageCacheAfter.majorFaults - pageCacheBefore.majorFaults} major page faults (whole machine, /proc/vmstat)`,
      `WAL in (c): ${(Number(wal.bytes) / 1e6).toFixed(1)} MB, ${(Number(wal.bytes) / steady.ops / 1e3).toFixed(1)} kB per pay; new segments created (zero-filled while commits wait): ${Number(wal.created).toFixed(1)} (a checkpoint before (c) left recycled ones, as on a running server)`,
      `autovacuum in (c), per table (runs finished; their duration, which includes autovacuum's cost-based sleeps, not CPU time): ${upkeep.length === 0 ? 'none' : upkeep.map((u) => `${u.table} ${[u.vacuums > 0 ? `vacuum ×${u.vacuums}` : '', u.analyzes > 0 ? `analyze ×${u.analyzes}` : ''].filter(Boolean).join(' + ')} (${u.ms.toFixed(0)} ms)`).join(', ')}`,
      `API garbage collection in (c): ${gcInSteady}; in (a) and (b): ${gcInSaturation}`,
      ...failureLines(failures, failureCodes),
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);

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
 * BENCH_SIGNER_STDOUT (files for the services' standard output, e.g. with `--trace-gc`), BENCH_POLICY=bounds (the pay
 * phases' wallets with a policy at the schema's bounds: ./support/bench-policy-at-bounds.ts), BENCH_VELOCITY_WINDOW_SECONDS
 * (the bench wallets' velocity cap window, default 60: ./support/service-bench-parts.ts), BENCH_PHASES=saturation
 * ((a) and (b) alone, the raw HSM ceiling measured before and after them: ./support/pay-bench-saturation.ts),
 * BENCH_CPU_PROFILE_DIR (V8 CPU profiles of both services, with the marks of (a), (b), (a signed) and (b signed) on
 * their clock) and BENCH_PERF_DIR (`perf record` of the API over (a) and (b)), BENCH_HEAP_PROFILE_DIR (what the API
 * allocates over them) — ./support/profile-windows.ts. On the images' Node: `npm run bench:node24`
 * (./on-images-node.sh).
 * With the store (the default), the signer-alone ceiling is also measured three ways in alternating one-second
 * slices — a second signer process without the store, the store on a wallet without a signed policy, and on a
 * wallet whose policy is signed — and after (c) every bench wallet's policy is signed by the bench's approver
 * (./support/owner-policy-bench.ts) and (a) and (b) run again on the signed path.
 *
 * This file orders the phases; each lives in a module of its own under ./support/ (pay-bench-ceilings.ts,
 * pay-bench-history.ts, pay-bench-store-cost.ts, pay-bench-steady.ts, pay-bench-agent-pat.ts), with the CPU samples
 * (pay-bench-cpu.ts), the load (pay-bench-load.ts), the services (pay-bench-services.ts) and the report
 * (pay-bench-report.ts, pay-bench-steady-report.ts, pay-bench-metrics.ts) beside them.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createKnex, migrateLatest } from '../src/api/db/knex-client.js';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { freePort } from '../test/support/test-database.js';
import {
  BENCH_WALLET_POLICY,
  benchPayBody,
  benchPost,
  createBenchWallets,
  runBench,
  benchCode,
} from './support/service-bench-parts.js';
import { measureWakeUpCost } from './support/wake-up-cost.js';
import { measureWakePlacement } from './support/wake-placement.js';
import { drive, type DriveResult } from './support/closed-loop.js';
import { runningDamonMonitors } from './support/kernel-thread-cpu.js';
import { readProbeSlices } from './support/loop-probe-slices.js';
import { benchApprover, signBenchPolicies } from './support/owner-policy-bench.js';
import { readProcessThreads } from './support/thread-switches.js';
import { cpuSampler, type CpuSample } from './support/pay-bench-cpu.js';
import { driveEach, rate } from './support/drive-each.js';
import { measureHsmCeiling, measurePostgresCeilings, measureSignerCeiling } from './support/pay-bench-ceilings.js';
import { signerEnvFor, startBenchSigner, startPayBenchApi } from './support/pay-bench-services.js';
import { PayLoad } from './support/pay-bench-load.js';
import { prepareHistory } from './support/pay-bench-history.js';
import { openStoreCostRun } from './support/pay-bench-store-cost.js';
import { runSteadyPhase } from './support/pay-bench-steady.js';
import { runAgentPatPhase } from './support/pay-bench-agent-pat.js';
import { payBenchReport } from './support/pay-bench-report.js';
import { saturationReport } from './support/pay-bench-saturation.js';
import { policyAtBounds } from './support/bench-policy-at-bounds.js';
import { PhaseMarks, startHeapSampling, startPerfRecord } from './support/profile-windows.js';
import { signatureMicros } from './support/signer-ratio-bound.js';

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
/** BENCH_PHASES=saturation: the run stops after (a) and (b), with the raw HSM ceiling measured again after them. */
const SATURATION_ONLY = process.env.BENCH_PHASES === 'saturation';
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
/** The pay phases' wallets' policy: BENCH_POLICY=bounds, one at the schema's bounds (./support/bench-policy-at-bounds.ts). */
const WALLET_POLICY = process.env.BENCH_POLICY === 'bounds' ? policyAtBounds(SELLER) : BENCH_WALLET_POLICY;

/** PostgreSQL's ceilings and the machine's hand-offs, each alone on the machine (not with BENCH_PHASES=saturation). */
async function measureBaselines(connectionString: string, seconds: number) {
  const { dbSpread, dbHot } = await measurePostgresCeilings({ connectionString, seconds, keys: WALLETS });
  process.stderr.write(`• baseline: hand-offs between two processes, back to back and at ${STEADY_RATE}/s\n`);
  const wakeUps = await measureWakeUpCost(STEADY_RATE, 3);
  const placement = await measureWakePlacement();
  return { dbSpread, dbHot, wakeUps, placement };
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
    // The ceilings, each alone on the machine (./support/pay-bench-ceilings.ts).
    const ceilingSeconds = Math.min(SECONDS, 5);
    const { hsm, ratioBound } = await measureHsmCeiling({ token, seconds: ceilingSeconds, usdc: USDC, payTo: SELLER });
    const baselines = SATURATION_ONLY ? undefined : await measureBaselines(database.connectionString, ceilingSeconds);

    process.stderr.write('• starting treasury-signer and treasury-api\n');
    const socket = path.join(dir, 'signer.sock');
    // The approver of the bench wallets' signed policies (bench wallets are made with an api key).
    const approver = OWNER_POLICIES ? benchApprover() : null;
    const signerEnv = signerEnvFor({ token, database, approver });
    children.push(await startBenchSigner(signerEnv(socket, true)));
    const signerPid = children[0]?.pid;
    const bareSocket = path.join(dir, 'signer-bare.sock');
    const signerCeiling = SATURATION_ONLY
      ? undefined
      : await measureSignerCeiling({
          socket,
          signerPid,
          seconds: ceilingSeconds,
          approver,
          startBare: () => startBenchSigner(signerEnv(bareSocket, false)),
          bareSocket,
          usdc: USDC,
          payTo: SELLER,
        });

    const apiPort = await freePort();
    const admin = `adm_${randomBytes(24).toString('base64url')}`;
    const apiChild = await startPayBenchApi({
      databaseUrl: database.connectionString,
      signerSocket: socket,
      adminToken: admin,
      port: apiPort,
      probeFile: path.join(dir, 'api.probe'),
    });
    children.push(apiChild);
    const api = `http://127.0.0.1:${apiPort}`;
    const post = benchPost(api);
    const minted = await post('/v1/treasury', admin, { owner_type: 'bench', owner_id: 'bench' });
    const apiKey = minted.body.api_key as string;
    process.stderr.write(`• creating ${WALLETS} wallets\n`);
    const walletIds = await createBenchWallets(post, apiKey, WALLETS, WALLET_POLICY);
    // The load generator shares the two cores with what it measures (./support/pay-bench-load.ts). As the SDK's
    // TreasuryAccount asks for each signature: under an Idempotency-Key of its own (BENCH_IDEMPOTENCY_KEYS=0: none).
    const load = new PayLoad({
      port: apiPort,
      connections: CONCURRENCY,
      apiKey,
      payBody: benchPayBody(USDC, SELLER),
      idempotencyKeys: IDEMPOTENCY_KEYS,
    });
    const spreadPay = load.spread(walletIds);
    // Warm-up, so that (a) measures a running service rather than a starting one: every wallet paid once (its
    // key unwrapped in the HSM and cached by the signer, its snapshot remembered by the API — measured: a first
    // payment costs the signer an unwrap and the API a read), then a few seconds of load for the JIT compilers
    // (measured: the API was still compiling during (a) after 2 s).
    process.stderr.write(
      FIRST_PAY_WARM_SECONDS > 0
        ? `• warm-up: ${FIRST_PAY_WARM_SECONDS} s over ${FIRST_PAY_WARM_WALLETS} wallets of its own, every wallet once, then 3 s\n`
        : '• warm-up: every wallet once, then 3 s\n',
    );
    const sample = cpuSampler({ apiPid: apiChild.pid, signerPid, pgDataDir });
    // A wallet's first payment by process (its key's unwrap and its first snapshot read are made when the wallet is),
    // on a pay path already compiled by payments from other wallets (FIRST_PAY_WARM_SECONDS).
    if (FIRST_PAY_WARM_SECONDS > 0) {
      const warmWallets = await createBenchWallets(post, apiKey, FIRST_PAY_WARM_WALLETS, WALLET_POLICY);
      await drive(CONCURRENCY, FIRST_PAY_WARM_SECONDS, (i) => load.payOnce(warmWallets[i % warmWallets.length]!));
    }
    const cpuBeforeFirst = sample();
    const firstPayments = await driveEach(CONCURRENCY, walletIds, load.payOnce);
    const first = { result: firstPayments, before: cpuBeforeFirst, after: sample() };
    await drive(CONCURRENCY, 3, spreadPay);
    // A running service has history and statistics (./support/pay-bench-history.ts).
    const history = await prepareHistory(database.connectionString, HISTORY);

    process.stderr.write(`• pay (a): ${WALLETS} wallets, ${CONCURRENCY} concurrent, ${SECONDS} s\n`);
    const scrape = async () => (await fetch(`${api}/metrics`)).text();
    const metricsBeforeSpread = await scrape();
    const threads = () => ({ api: readProcessThreads(apiChild.pid), signer: readProcessThreads(signerPid) });
    const threadsBefore = threads();
    // (a) and (b) marked on the profiles' clock, and recorded by `perf` with BENCH_PERF_DIR (./support/profile-windows.ts).
    const marks = new PhaseMarks();
    const stopPerf = startPerfRecord(apiChild.pid);
    const stopHeapSampling = startHeapSampling(apiChild.pid);
    const cpuBefore = sample();
    load.phase = '(a)';
    const spread = await marks.around('(a)', () => drive(CONCURRENCY, SECONDS, spreadPay));
    const cpuAfter = sample();
    const threadsAfter = threads();
    const metricsAfterSpread = await scrape();
    process.stderr.write(`• pay (b): one hot wallet, ${CONCURRENCY} concurrent, ${SECONDS} s\n`);
    load.phase = '(b)';
    const hot = await marks.around('(b)', () => drive(CONCURRENCY, SECONDS, () => load.payOnce(walletIds[0]!)));
    const cpuAfterHot = sample();
    const threadsAfterHot = threads();
    const metricsAfterHot = await scrape();
    await stopPerf();
    await stopHeapSampling();
    if (!baselines || !signerCeiling) {
      // BENCH_PHASES=saturation: the raw ceiling again, so a machine shared with other work shows in the spread.
      const after = await measureHsmCeiling({ token, seconds: ceilingSeconds, usdc: USDC, payTo: SELLER });
      const lines = saturationReport({
        machine: { cores: os.cpus().length, node: process.version, at: new Date().toISOString(), code: benchCode() },
        concurrency: CONCURRENCY,
        wallets: WALLETS,
        hsm: [hsm, after.hsm],
        spread,
        hot,
        cpu: [cpuBefore, cpuAfter, cpuAfterHot],
        threads: [threadsBefore, threadsAfter, threadsAfterHot],
        metrics: [metricsBeforeSpread, metricsAfterSpread, metricsAfterHot],
        failures: load.failures,
        failureCodes: load.failureCodes,
      });
      load.close();
      process.stdout.write(lines.join('\n') + '\n');
      return;
    }

    // The second check's cost in this run: the same pays through a second API whose signer keeps no store, in
    // alternating one-second slices (./support/pay-bench-store-cost.ts). Its processes run until the signed phases' turn.
    const storeCost = await openStoreCostRun({
      connectionString: database.connectionString,
      pgDataDir,
      children,
      roles: new Map<ChildProcess, 'API' | 'signer'>([
        [children[0]!, 'signer'],
        [apiChild, 'API'],
      ]),
      rounds: STORE_ROUNDS,
      load,
    });
    if (approver)
      await storeCost.compareUnsigned({ dir, signerEnv, adminToken: admin, walletIds, concurrency: CONCURRENCY });

    // (c) at a steady offered rate, after its floor (./support/pay-bench-steady.ts).
    const steady = await runSteadyPhase({
      connectionString: database.connectionString,
      pgDataDir,
      cwd: ROOT,
      api,
      load,
      walletIds,
      wallets: WALLETS,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
      steadyRate: STEADY_RATE,
      payRate: rate(spread),
      floorWork: FLOOR_WORK,
      signatureMicros: signatureMicros(ratioBound),
      sample,
      threads,
    });

    // (a) and (b) again, every bench wallet's policy now signed by the approver: the signer's locked path.
    let signed: { spread: DriveResult; hot: DriveResult; cpu: [CpuSample, CpuSample, CpuSample] } | undefined;
    if (approver) {
      process.stderr.write(`• signing the ${WALLETS} wallets' policies, then (a) and (b) again\n`);
      await signBenchPolicies(api, apiKey, walletIds, approver, WALLET_POLICY);
      load.phase = '(a, signed) warm-up';
      await drive(CONCURRENCY, 2, spreadPay);
      load.phase = '(a, signed)';
      const cpuBeforeSigned = sample();
      const spreadSigned = await marks.around('(a signed)', () => drive(CONCURRENCY, SECONDS, spreadPay));
      const cpuAfterSpreadSigned = sample();
      load.phase = '(b, signed)';
      const hotSigned = await marks.around('(b signed)', () =>
        drive(CONCURRENCY, SECONDS, () => load.payOnce(walletIds[0]!)),
      );
      signed = { spread: spreadSigned, hot: hotSigned, cpu: [cpuBeforeSigned, cpuAfterSpreadSigned, sample()] };
      await storeCost.compareSigned();
    }
    await storeCost.close();

    // (d) A buyer agent paying through its PAT with a daily cap (./support/pay-bench-agent-pat.ts).
    const capped = await runAgentPatPhase({
      api,
      post,
      load,
      patWallets: PAT_WALLETS,
      concurrency: CONCURRENCY,
      seconds: SECONDS,
    });
    load.close();

    const lines = payBenchReport({
      settings: {
        wallets: WALLETS,
        concurrency: CONCURRENCY,
        steadyRate: STEADY_RATE,
        patWallets: PAT_WALLETS,
        idempotencyKeys: IDEMPOTENCY_KEYS,
        floorWork: FLOOR_WORK,
      },
      machine: { cores: os.cpus().length, node: process.version, at: new Date().toISOString(), code: benchCode() },
      history,
      ceilings: { hsm, ratioBound, dbSpread: baselines.dbSpread, dbHot: baselines.dbHot, ...signerCeiling },
      wakeUps: baselines.wakeUps,
      placement: baselines.placement,
      first,
      spread,
      hot,
      cpu: [cpuBefore, cpuAfter, cpuAfterHot],
      threads: [threadsBefore, threadsAfter, threadsAfterHot],
      metrics: [metricsBeforeSpread, metricsAfterSpread, metricsAfterHot],
      storeCosts: storeCost.costs,
      steady,
      signed,
      capped,
      failures: load.failures,
      failureCodes: load.failureCodes,
      damon: runningDamonMonitors(),
      probes: { api: readProbeSlices(path.join(dir, 'api.probe')), signer: readProbeSlices(`${socket}.probe`) },
    });
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const child of children.reverse()) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1500));
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);

/**
 * The services `npm run bench` measures, started as production starts them: treasury-signer and treasury-api as
 * their own processes (./service-bench-parts.ts), each with its start-up flags (ops/node-flags.ts) and the
 * event-loop and collection probe (./loop-probe.ts) loaded; the signer with the SoftHSM token, raised per-wallet
 * ceilings and, with the store, its policy database and the bench's approver.
 *
 * Options (env, read when a process starts): BENCH_CPU_PROFILE_DIR, BENCH_PERF_DIR (the API with `--perf-basic-prof`,
 * ./profile-windows.ts), BENCH_HEAP_PROFILE_DIR (the API with ./heap-sampling-probe.ts), BENCH_NODE_FLAGS, BENCH_SIGNER_STDOUT and BENCH_API_STDOUT, as pay-bench.ts's header
 * describes them. Limits: not for tests; the caller stops the
 * children it is given.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PrivateKeyAccount } from 'viem/accounts';
import type { SoftHsmToken } from '../../ops/softhsm/init-token.js';
import type { EmbeddedPostgresHandle } from '../../src/api/db/embedded-postgres.js';
import { nodeFlagsFor } from '../../ops/node-flags.js';
import { benchSignerEnv } from './bench-token.js';
import { startBenchApi, startTsChild } from './service-bench-parts.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The event-loop and collection probe loaded into the signer and the API (./loop-probe.ts). */
const LOOP_PROBE = path.join(ROOT, 'bench/support/loop-probe.ts');
/** The API's allocation sampler, with BENCH_HEAP_PROFILE_DIR (./heap-sampling-probe.ts). */
const HEAP_PROBE = path.join(ROOT, 'bench/support/heap-sampling-probe.ts');

/**
 * Node flags for the signer or API process: its own start-up flags (ops/node-flags.ts, as `npm run start:*` and
 * the images run it), then BENCH_CPU_PROFILE_DIR (V8 CPU profiles, see support/summarise-cpu-profile.ts), for the
 * API BENCH_PERF_DIR (`--perf-basic-prof`: JavaScript's names for `perf record`, ./profile-windows.ts), and
 * BENCH_NODE_FLAGS (a flag given again there wins).
 */
export function childNodeFlags(entry: 'signer/main.ts' | 'src/api/main.ts'): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  const perf = entry === 'src/api/main.ts' && process.env.BENCH_PERF_DIR;
  return [
    ...nodeFlagsFor(entry),
    ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []),
    ...(perf ? ['--perf-basic-prof'] : []),
    ...(process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean),
  ];
}

/** Starts the signer (./service-bench-parts.ts) and resolves once it logs the message `signer ready`. */
export async function startBenchSigner(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const entry = 'signer/main.ts';
  const ready = 'signer ready';
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

/**
 * The signer's environment for a process listening on `signerSocket`, with its store (`store` and an approver) or
 * without. The bench signs thousands a second on one wallet: far past the signer's default per-wallet ceilings, so
 * they are raised here (the per-signature maximum keeps its default; bench payments are 0.001 USDC).
 */
export function signerEnvFor(o: {
  token: SoftHsmToken;
  database: EmbeddedPostgresHandle;
  approver: PrivateKeyAccount | null;
}) {
  const { token, database, approver } = o;
  return (signerSocket: string, store: boolean) => ({
    TREASURY_SIGNER_SOCKET: signerSocket,
    LOOP_PROBE_FILE: `${signerSocket}.probe`,
    ...benchSignerEnv(token),
    ...(store && approver
      ? {
          TREASURY_SIGNER_DATABASE_URL: database.connectionStringFor('treasury_signer'),
          TREASURY_SIGNER_POLICY_APPROVER: approver.address,
        }
      : {}),
  });
}

/**
 * The bench's API, with the probe writing to `probeFile`. It logs its ready line at info; the bench runs it at warn
 * (no access log) and polls readiness.
 */
export function startPayBenchApi(o: {
  databaseUrl: string;
  signerSocket: string;
  adminToken: string;
  port: number;
  probeFile: string;
}): Promise<ChildProcess> {
  const heapDir = process.env.BENCH_HEAP_PROFILE_DIR;
  return startBenchApi({
    databaseUrl: o.databaseUrl,
    signerSocket: o.signerSocket,
    adminToken: o.adminToken,
    port: o.port,
    nodeFlags: childNodeFlags('src/api/main.ts'),
    imports: heapDir ? [LOOP_PROBE, HEAP_PROBE] : [LOOP_PROBE],
    env: { LOOP_PROBE_FILE: o.probeFile, ...(heapDir ? { HEAP_PROBE_DIR: heapDir } : {}) },
    // BENCH_API_STDOUT: a file for the API's standard output (what V8's --trace-gc* flags print there).
    stdout: process.env.BENCH_API_STDOUT ? fs.openSync(process.env.BENCH_API_STDOUT, 'w') : 'ignore',
  });
}

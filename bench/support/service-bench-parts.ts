/**
 * What the two service benchmarks (pay-bench.ts, kms-bench.ts) share: a service's entry point started as
 * production starts it when the build is current (`benchCode`), else through tsx, and waited for until a line it
 * prints says it is ready, stopped with SIGTERM (SIGKILL after 10 s);
 * treasury-api started and polled until ready; one signature through a signer process's socket (a fresh
 * EIP-3009 authorization of 0.001 USDC, the ceiling both measure); the wallets every payment phase pays from
 * and the body of a bench payment. Not for tests: no temporary directories, and children are stopped by the
 * benches themselves (startBenchApi kills its child only when it never became ready).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SignerClient } from '../../signer/protocol/signer-client.js';
import { percentile, type DriveResult } from './closed-loop.js';
import { API_NODE_FLAGS, nodeFlagsFor } from '../../ops/node-flags.js';
import { BUILD_SOURCE_DIRS, buildIsCurrent } from '../../bin/build-freshness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface StartTsChildOptions {
  /** Arguments after the entry point. */
  args?: string[];
  /** Over the bench's own environment. */
  env?: NodeJS.ProcessEnv;
  /**
   * Node flags before `--import tsx` (CPU profiles, BENCH_NODE_FLAGS); default: the service's own start-up
   * flags (ops/node-flags.ts) for `signer/main.ts` and `src/api/main.ts`, none for other entries.
   */
  nodeFlags?: readonly string[];
  /** Whether a line of its standard output or error says it is ready. */
  ready: (line: string) => boolean;
  /** The checkout whose `entry` runs (default this one: a bench may run another commit's service beside its own). */
  root?: string;
  /** TypeScript modules imported before the entry point (a bench's probes: ./ts-preload.mjs when the build runs). */
  imports?: string[];
  /** The Node binary it runs on (default the bench's own, process.execPath). */
  node?: string;
}

/**
 * How a service of `root` runs: as production runs it, its compiled build (`npm run build`, dist/) when that is
 * current (bin/build-freshness.mjs), else its TypeScript sources through tsx — whose transform adds a property
 * definition to every function made at run time. BENCH_CODE=dist|sources forces one.
 */
export function benchCode(root: string = ROOT): 'dist' | 'sources' {
  const forced = process.env.BENCH_CODE;
  if (forced === 'dist' || forced === 'sources') return forced;
  const entries = ['dist/signer/main.js', 'dist/src/api/main.js'];
  return entries.every((e) => buildIsCurrent(e, BUILD_SOURCE_DIRS, [], root)) ? 'dist' : 'sources';
}

/** Loads one TypeScript preload into a compiled service without tsx's global loader (./ts-preload.mjs). */
const TS_PRELOAD = pathToFileURL(path.join(ROOT, 'bench/support/ts-preload.mjs')).href;

/**
 * Node's arguments for `entry` of `root` (see `benchCode`): flags, then the sources through tsx with the preloads,
 * or the compiled entry with each TypeScript preload through ./ts-preload.mjs (its modules load as in production).
 * Exported for test/integration/bench/ts-preload.test.ts.
 */
export function serviceArgs(
  root: string,
  entry: string,
  flags: readonly string[],
  imports: readonly string[],
): string[] {
  const compiled = path.join(root, 'dist', entry.replace(/\.ts$/, '.js'));
  // Only the services are built (the KMS emulator, a test double, is not).
  if (benchCode(root) === 'sources' || !fs.existsSync(compiled))
    return [...flags, '--import', 'tsx', ...imports.flatMap((m) => ['--import', m]), path.join(root, entry)];
  const preloads = imports.flatMap((m) => [
    '--import',
    `${TS_PRELOAD}?preload=${encodeURIComponent(pathToFileURL(path.resolve(root, m)).href)}`,
  ]);
  return [...flags, ...preloads, compiled];
}

/** Spawns `entry` (relative to the repository) and resolves with it and its first ready line (60 s at most). */
export function startTsChild(
  entry: string,
  options: StartTsChildOptions,
): Promise<{ child: ChildProcess; line: string }> {
  return new Promise((resolve, reject) => {
    const root = options.root ?? ROOT;
    const argv = [
      ...serviceArgs(root, entry, options.nodeFlags ?? nodeFlagsFor(entry), options.imports ?? []),
      ...(options.args ?? []),
    ];
    const child = spawn(options.node ?? process.execPath, argv, {
      cwd: root,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    const timer = setTimeout(() => reject(new Error(`${entry} not ready:\n${log}`)), 60_000);
    for (const s of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: s }).on('line', (line) => {
        if (log.length < 20_000) log += line + '\n';
        if (options.ready(line)) {
          clearTimeout(timer);
          resolve({ child, line });
        }
      });
    }
    child.once('exit', (code) => reject(new Error(`${entry} exited ${code}:\n${log}`)));
  });
}

/** SIGTERM, then SIGKILL if it has not exited within 10 s. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/**
 * A function signing one fresh EIP-3009 authorization of 1000 raw units from `wallet` to `payTo` on Base
 * Sepolia's `usdc` through the signer's socket, as the API asks for it.
 */
export function signerSignOnce(
  client: SignerClient,
  accountKeyRef: string,
  wallet: { wallet_key_ref: string; address: string },
  usdc: string,
  payTo: string,
): () => Promise<unknown> {
  return () =>
    client.signTransferAuthorization({
      account_key_ref: accountKeyRef,
      wallet_key_ref: wallet.wallet_key_ref,
      address: wallet.address,
      domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: usdc },
      message: {
        from: wallet.address,
        to: payTo,
        value: '1000',
        validAfter: '0',
        validBefore: String(Math.floor(Date.now() / 1000) + 300),
        nonce: `0x${randomBytes(32).toString('hex')}`,
      },
    });
}

/** A POST to the API at `base` with a bearer and a JSON body; its status and parsed answer. */
export function benchPost(base: string) {
  return async (route: string, bearer: string, body: unknown) => {
    const res = await fetch(base + route, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/**
 * The velocity cap's window of the bench wallets' policy, seconds: BENCH_VELOCITY_WINDOW_SECONDS (default 60). A
 * window shorter than a phase shows what a wallet paid more than 32 times a window costs once it has been paid for
 * longer than one (its remembered window runs out of known payment times and is read on — read again in full
 * before December 7: policy/velocity-window.ts; docs/performance.md, "A hot wallet paid for longer than its
 * velocity window").
 */
function benchVelocityWindowSeconds(): number {
  const raw = process.env.BENCH_VELOCITY_WINDOW_SECONDS;
  if (raw === undefined || raw === '') return 60;
  const seconds = Number(raw);
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > 86_400)
    throw new Error('BENCH_VELOCITY_WINDOW_SECONDS: whole seconds from 1 to 86400');
  return seconds;
}

/** The policy of every bench wallet: caps no bench reaches, so every payment is allowed. */
export const BENCH_WALLET_POLICY = {
  per_tx_cap_usd: '1',
  daily_cap_usd: '1000000',
  velocity_cap: { max_count: 1000000, window_seconds: benchVelocityWindowSeconds() },
};

/**
 * `send` again while it answers 503 (the database busy: on a loaded machine a wallet's key creation can outlast
 * the statement timeout), up to 5 times, a second apart; the last answer otherwise.
 */
async function postRetryingBusy<T extends { status: number }>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await send();
    if (answer.status !== 503 || attempt >= 5) return answer;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Creates `count` wallets under `apiKey` with `policy`, 16 at a time; their ids. Throws on an answer other than 201. */
export async function createBenchWallets(
  post: ReturnType<typeof benchPost>,
  apiKey: string,
  count: number,
  policy: object = BENCH_WALLET_POLICY,
): Promise<string[]> {
  const walletIds: string[] = [];
  for (let i = 0; i < count; i += 16) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(16, count - i) }, () =>
        postRetryingBusy(() => post('/v1/wallets', apiKey, { policy })),
      ),
    );
    for (const b of batch)
      if (b.status !== 201) throw new Error(`wallet creation answered ${b.status}: ${JSON.stringify(b.body)}`);
    walletIds.push(...batch.map((b) => b.body.id as string));
  }
  return walletIds;
}

/** The body of every bench payment: 1000 raw units of Base Sepolia's `usdc` to `payTo`, exact scheme. */
export function benchPayBody(usdc: string, payTo: string) {
  return {
    payment_requirements: {
      scheme: 'exact',
      network: 'eip155:84532',
      payTo,
      amount: '1000',
      asset: usdc,
      extra: { name: 'USDC', version: '2' },
      maxTimeoutSeconds: 300,
    },
    capability: 'bench',
  };
}

export interface BenchApiOptions {
  databaseUrl: string;
  signerSocket: string;
  adminToken: string;
  port: number;
  /** Node flags before `--import tsx` (default: the API's start-up flags, ops/node-flags.ts). */
  nodeFlags?: readonly string[];
  /** Where its standard output goes (its standard error is the bench's). */
  stdout?: 'ignore' | number;
  /** The checkout whose API runs (default this one). */
  root?: string;
  /** Over the API's environment. */
  env?: NodeJS.ProcessEnv;
  /** TypeScript modules imported before the entry point (see StartTsChildOptions.imports). */
  imports?: string[];
  /** The Node binary it runs on (default the bench's own, process.execPath). */
  node?: string;
}

/**
 * Starts treasury-api (src/api/main.ts) at warn (no access log), its pool at 24 connections, and polls its
 * /readyz every 200 ms until it answers 200; throws if it exits first or after about a minute (killing it).
 */
export async function startBenchApi(options: BenchApiOptions): Promise<ChildProcess> {
  const root = options.root ?? ROOT;
  const argv = serviceArgs(root, 'src/api/main.ts', options.nodeFlags ?? API_NODE_FLAGS, options.imports ?? []);
  const child = spawn(options.node ?? process.execPath, argv, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      TREASURY_SIGNER_SOCKET: options.signerSocket,
      TREASURY_ADMIN_TOKEN: options.adminToken,
      TREASURY_PORT: String(options.port),
      TREASURY_LOG_LEVEL: 'warn',
      TREASURY_DB_POOL_MAX: '24',
      // The benches make their wallets on one account (1,000 by default): above the default bound of 500; and
      // pay-bench's phase (d) makes BENCH_PAT_WALLETS (100) for one agent, above the default bound of 25 (its
      // 75 refused creations once sent three payments in four to `/v1/wallets/undefined/pay`: 400s).
      TREASURY_MAX_WALLETS_PER_ACCOUNT: '100000',
      TREASURY_MAX_WALLETS_PER_AGENT: '100000',
      // Owner-signed policies go to every wallet of the one account (BENCH_OWNER_POLICIES): above the default
      // 60 policy writes an account per window.
      TREASURY_RATE_LIMIT_POLICY: '10000000',
      ...options.env,
    },
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'],
  });
  for (let i = 0; ; i++) {
    const ok = await fetch(`http://127.0.0.1:${options.port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return child;
    if (i > 300 || child.exitCode !== null) {
      if (child.exitCode === null) child.kill('SIGKILL');
      throw new Error('treasury-api did not become ready');
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The report's line of answers other than 200 (phase and status: count), none when every answer was 200. */
export function failureLines(
  failures: Map<string, number>,
  codes: Map<string, Map<string, number>> = new Map(),
): string[] {
  if (failures.size === 0) return [];
  const named = (k: string) => {
    const byCode = codes.get(k);
    return byCode ? ` (${[...byCode].map(([code, n]) => `${code} ${n}`).join(', ')})` : '';
  };
  const counts = [...failures].map(([k, n]) => `${k}: ${n}${named(k)}`).join(', ');
  return [`answers other than 200 (phase, status: count; 0 = connection failed): ${counts}`];
}

/** Runs a bench's `main`; a failure is printed with its stack and exits 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

/**
 * The Markdown table both benches report: its header and rule, and a row per measurement (ops/s, p50 and p99
 * latency, errors, and its rate as a ratio to each named ceiling), `nameWidth` and `ratioWidth` wide.
 */
export function resultTable(nameWidth: number, ratioWidth: number) {
  const rate = (r: DriveResult) => r.ops / r.seconds;
  return {
    header: `| ${'measurement'.padEnd(nameWidth)} | ${'ops/s'.padStart(7)} | ${'p50 ms'.padStart(7)} | ${'p99 ms'.padStart(7)} | ${'errors'.padStart(6)} | ${'ratio to ceiling'.padEnd(ratioWidth)} |`,
    rule: `|${'-'.repeat(nameWidth + 2)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(8)}|${'-'.repeat(ratioWidth + 2)}|`,
    row: (name: string, r: DriveResult, ceilings: Array<[string, DriveResult]>) => {
      const ratios = ceilings.map(([n, c]) => `${(rate(r) / rate(c)).toFixed(2)} × ${n}`).join(', ');
      const p50 = percentile(r.latenciesMs, 50).toFixed(2);
      const p99 = percentile(r.latenciesMs, 99).toFixed(2);
      return `| ${name.padEnd(nameWidth)} | ${rate(r).toFixed(0).padStart(7)} | ${p50.padStart(7)} | ${p99.padStart(7)} | ${String(r.errors).padStart(6)} | ${ratios.padEnd(ratioWidth)} |`;
    },
  };
}

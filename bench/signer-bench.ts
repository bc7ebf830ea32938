/**
 * `npm run bench:signer`: the signer process alone through its socket, against the raw SoftHSM sign rate, in
 * alternating one-second slices of one run (so the machine's load hits every variant alike): raw signatures
 * through the PKCS#11 backend in this process; and for each signer checkout named (BENCH_SIGNER_ROOTS, default
 * this one) a signer without its policy store, the same with the store on a wallet without a signed policy, on
 * a wallet whose policy is signed, and on many signed wallets in turn. Prints each variant's rate, its ratio to
 * the raw rate, its p50/p99, and the CPU per signature of the signer process, of this process (the raw signatures,
 * or the socket's client) and of PostgreSQL's processes during its slices — steadier than the rates on a shared
 * machine. Each signer runs as production starts it — its build when current (`npm run build`), its start-up flags
 * (ops/node-flags.ts) — or from its sources through tsx (BENCH_CODE=sources; until November 30, 2026 it always did).
 *
 * Options (env): BENCH_SECONDS (slices per variant, default 8), BENCH_LOOPS (closed loops, default 8),
 * BENCH_SIGNER_ROOTS (`label=path,…`: compare checkouts in one run, e.g. `base=/tmp/base,new=.`; each signer gets
 * its own database; `label=path=KEY:VALUE;KEY:VALUE` also sets that checkout's signers' environment, e.g.
 * `s4=.,s2=.=TREASURY_PKCS11_SESSIONS:2;UV_THREADPOOL_SIZE:2` to compare settings of one checkout, and `NODE:<binary>`
 * the Node its signers run on: ./support/bench-checkouts.ts), BENCH_SIGNER_STORE=0 (the store-less signers only: no PostgreSQL is started),
 * BENCH_SIGNER_CLIENT_CONNECTIONS (`1,4`: one store-less variant per client, each with that many connections to the
 * same signer process; default: the client's default),
 * BENCH_SIGNER_SPREAD (signed wallets of the spread variant, default 64; 0: none),
 * BENCH_CPU_PROFILE_DIR (`--cpu-prof` on the signer children), BENCH_SIGNER_VARIANTS (`signed,no store`: only the
 * variants whose name includes one of these, beside the raw one — e.g. so that a profile holds one variant's work).
 * Not for tests: it leaves its temporary directory's removal to the OS and signs with a throwaway approver.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchSignerEnv, openBenchBackend } from './support/bench-token.js';
import { parseBenchCheckouts, type BenchCheckout } from './support/bench-checkouts.js';
import { measureSignerRatioBound, signerRatioBoundLine, type SignerRatioBound } from './support/signer-ratio-bound.js';
import { SignerClient } from '../signer/protocol/signer-client.js';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { freePort } from '../test/support/test-database.js';
import { drive, percentile, type DriveResult } from './support/closed-loop.js';
import { benchApprover, signSignerWalletPolicy } from './support/owner-policy-bench.js';
import { postgresProcessCpu } from './support/postgres-process-cpu.js';
import { readProcStat } from './support/proc-stat.js';
import {
  BENCH_WALLET_POLICY,
  runBench,
  signerSignOnce,
  startTsChild,
  stopChild,
} from './support/service-bench-parts.js';
import { nodeFlagsFor } from '../ops/node-flags.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const LOOPS = Number(process.env.BENCH_LOOPS ?? 8);
/** Signed wallets the spread variant signs from in turn (BENCH_SIGNER_SPREAD; 0 or 1: no such variant). */
const SPREAD = Number(process.env.BENCH_SIGNER_SPREAD ?? 64);
const STORE = process.env.BENCH_SIGNER_STORE !== '0';
/** Connection counts of the store-less variants' clients; `undefined`: one variant, the client's default. */
const CLIENT_CONNECTIONS: Array<number | undefined> = process.env.BENCH_SIGNER_CLIENT_CONNECTIONS
  ? process.env.BENCH_SIGNER_CLIENT_CONNECTIONS.split(',').map((n) => Math.min(16, Math.max(1, Number(n) || 1)))
  : [undefined];
/** Names (parts of) of the variants to run beside the raw one; empty: all. */
const ONLY = (process.env.BENCH_SIGNER_VARIANTS ?? '').split(',').filter((s) => s.length > 0);
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

interface Variant {
  name: string;
  once: () => Promise<unknown>;
  pid?: number;
  total?: DriveResult;
  signerCpu: number;
  /** Of `signerCpu`, the kernel's (system calls, wake-ups). */
  signerSystem: number;
  /** Of `signerCpu`, the main thread's (the rest is libuv's threads — the HSM's signatures — and V8's). */
  signerMain: number;
  /** This process's CPU seconds during the variant's slices: the raw signatures, or the socket's client. */
  benchCpu: number;
  pgCpu: number;
}

function roots(): BenchCheckout[] {
  const spec = process.env.BENCH_SIGNER_ROOTS;
  if (!spec) return [{ label: 'signer', root: ROOT, signerEnv: {} }];
  return parseBenchCheckouts(spec, 'BENCH_SIGNER_ROOTS');
}

/**
 * Starts the signer of checkout `root` as production starts it (./support/service-bench-parts.ts `startTsChild`: its
 * build when current, else its sources through tsx; its start-up flags) and resolves once it logs `signer ready`.
 */
async function startSigner(root: string, env: NodeJS.ProcessEnv, node?: string): Promise<ChildProcess> {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  const { child } = await startTsChild('signer/main.ts', {
    root,
    env,
    node,
    nodeFlags: [...nodeFlagsFor('signer/main.ts'), ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])],
    ready: (line) => line.includes('"msg":"signer ready"'),
  });
  return child;
}

function addSlice(total: DriveResult | undefined, slice: DriveResult): DriveResult {
  if (!total) return slice;
  return {
    ops: total.ops + slice.ops,
    seconds: total.seconds + slice.seconds,
    latenciesMs: [...total.latenciesMs, ...slice.latenciesMs],
    errors: total.errors + slice.errors,
  };
}

const pgSeconds = (dataDir: string) => Object.values(postgresProcessCpu(dataDir)).reduce((a, b) => a + b, 0);

interface Run {
  dir: string;
  database: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  token: Awaited<ReturnType<typeof initSoftHsmToken>>;
  approver: ReturnType<typeof benchApprover>;
  children: ChildProcess[];
  clients: SignerClient[];
}

/** The raw SoftHSM variant: signatures through the PKCS#11 backend in this process. */
async function rawVariant(
  run: Run,
): Promise<{ variant: Variant; bound: (rawMicros: number) => Promise<SignerRatioBound>; close: () => Promise<void> }> {
  process.env.SOFTHSM2_CONF = run.token.softhsm2Conf;
  const backend = openBenchBackend(run.token);
  const account = await backend.createAccountKey();
  const key = await backend.createWalletKey(account);
  const digest = randomBytes(32);
  const once = () => backend.signDigest(account, key.walletKeyRef, digest);
  return {
    variant: { name: 'raw SoftHSM', once, signerCpu: 0, signerSystem: 0, signerMain: 0, benchCpu: 0, pgCpu: 0 },
    bound: (rawMicros) => measureSignerRatioBound(backend, account, rawMicros, USDC, SELLER),
    close: () => backend.close(),
  };
}

function signerEnv(run: Run): NodeJS.ProcessEnv {
  return benchSignerEnv(run.token);
}

function variant(name: string, pid: number | undefined, once: () => Promise<unknown>): Variant {
  return { name, once, pid, signerCpu: 0, signerSystem: 0, signerMain: 0, benchCpu: 0, pgCpu: 0 };
}

/** A checkout's signer without the store, on one wallet: a variant per client connection count asked for. */
async function bareVariants(run: Run, { label, root, signerEnv: env, node }: BenchCheckout): Promise<Variant[]> {
  const socketPath = path.join(run.dir, `${label}-bare.sock`);
  const bare = await startSigner(root, { ...signerEnv(run), ...env, TREASURY_SIGNER_SOCKET: socketPath }, node);
  run.children.push(bare);
  const variants: Variant[] = [];
  let wallet: { account: string; key: { wallet_key_ref: string; address: string } } | undefined;
  for (const connections of CLIENT_CONNECTIONS) {
    const client = new SignerClient({ socketPath, connections });
    run.clients.push(client);
    if (!wallet) {
      const account = (await client.createAccountKey()).account_key_ref;
      wallet = { account, key: await client.createWalletKey({ account_key_ref: account }) };
    }
    const name = connections === undefined ? `${label}: no store` : `${label}: no store, ${connections} conn.`;
    variants.push(variant(name, bare.pid, signerSignOnce(client, wallet.account, wallet.key, USDC, SELLER)));
  }
  return variants;
}

/** A checkout's signer with its store, on a wallet without a signed policy and on one whose policy is signed. */
async function storeVariants(
  run: Run,
  { label, root, signerEnv: env, node }: BenchCheckout,
  admin: pg.Pool,
): Promise<Variant[]> {
  const db = `signer_${label.replace(/[^a-z0-9]/gi, '_')}`;
  await admin.query(`CREATE DATABASE ${db}`);
  const socketPath = path.join(run.dir, `${label}-store.sock`);
  const store = await startSigner(
    root,
    {
      ...signerEnv(run),
      ...env,
      TREASURY_SIGNER_SOCKET: socketPath,
      TREASURY_SIGNER_DATABASE_URL: run.database!.connectionStringFor(db),
      TREASURY_SIGNER_POLICY_APPROVER: run.approver.address,
    },
    node,
  );
  run.children.push(store);
  const client = new SignerClient({ socketPath });
  run.clients.push(client);
  const account = (await client.createAccountKey()).account_key_ref;
  const open = await client.createWalletKey({ account_key_ref: account });
  const signed = await client.createWalletKey({ account_key_ref: account });
  await signSignerWalletPolicy(client, signed.address, run.approver, BENCH_WALLET_POLICY);
  const variants = [
    variant(`${label}: store, no policy`, store.pid, signerSignOnce(client, account, open, USDC, SELLER)),
    variant(`${label}: store, signed`, store.pid, signerSignOnce(client, account, signed, USDC, SELLER)),
  ];
  if (SPREAD > 1 && (ONLY.length === 0 || ONLY.some((o) => `${label}: store, signed, ${SPREAD} wallets`.includes(o)))) {
    // Each signature on the next of SPREAD signed wallets: a batch of the store holds several wallets, as when a
    // service pays for many agents at once.
    const spread = await Promise.all(
      Array.from({ length: SPREAD }, async () => {
        const key = await client.createWalletKey({ account_key_ref: account });
        await signSignerWalletPolicy(client, key.address, run.approver, BENCH_WALLET_POLICY);
        return signerSignOnce(client, account, key, USDC, SELLER);
      }),
    );
    let next = 0;
    variants.push(variant(`${label}: store, signed, ${SPREAD} wallets`, store.pid, () => spread[next++ % SPREAD]!()));
  }
  return variants;
}

/** Every checkout's variants: store-less first, then (unless BENCH_SIGNER_STORE=0) those with the store. */
async function checkoutVariants(run: Run): Promise<Variant[]> {
  const variants: Variant[] = [];
  const admin = run.database && new pg.Pool({ connectionString: run.database.connectionString, max: 1 });
  try {
    for (const checkout of roots()) {
      variants.push(...(await bareVariants(run, checkout)));
      if (admin) variants.push(...(await storeVariants(run, checkout, admin)));
    }
  } finally {
    await admin?.end();
  }
  return variants;
}

/**
 * `SECONDS` rounds of a one-second slice of each variant, with the CPU of its signer and of PostgreSQL. Each slice
 * is preceded by a quarter of a second of the same load, not counted: without it the variant right after the raw
 * one lost 15–25 % of its rate and spent up to 15 % more CPU per signature, whichever it was (docs/performance.md,
 * "The signer through its socket, round two").
 */
async function alternate(variants: Variant[], pgDataDir: string | undefined): Promise<void> {
  for (const v of variants) for (let i = 0; i < 200; i++) await v.once();
  process.stderr.write(`• ${SECONDS} alternating one-second slices of ${variants.length} variants\n`);
  for (let round = 0; round < SECONDS; round++) {
    for (const v of variants) {
      await drive(LOOPS, 0.25, async () => {
        await v.once();
        return true;
      });
      const stat0 = readProcStat(v.pid);
      const main0 = readProcStat(v.pid, v.pid);
      const pg0 = pgDataDir ? pgSeconds(pgDataDir) : 0;
      const bench0 = process.cpuUsage();
      const slice = await drive(LOOPS, 1, async () => {
        await v.once();
        return true;
      });
      const stat1 = readProcStat(v.pid);
      v.signerCpu += (stat1?.cpuSeconds ?? 0) - (stat0?.cpuSeconds ?? 0);
      v.signerSystem += (stat1?.systemSeconds ?? 0) - (stat0?.systemSeconds ?? 0);
      v.signerMain += (readProcStat(v.pid, v.pid)?.cpuSeconds ?? 0) - (main0?.cpuSeconds ?? 0);
      const bench = process.cpuUsage(bench0);
      v.benchCpu += (bench.user + bench.system) / 1e6;
      v.pgCpu += pgDataDir ? pgSeconds(pgDataDir) - pg0 : 0;
      v.total = addSlice(v.total, slice);
    }
  }
}

function report(variants: Variant[]): string {
  const raw = variants[0]!.total!;
  const rawRate = raw.ops / raw.seconds;
  const lines = [
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  ];
  for (const v of variants) {
    const t = v.total!;
    const rate = t.ops / t.seconds;
    const sorted = t.latenciesMs.sort((a, b) => a - b);
    const perSign = (s: number) => ((s / t.ops) * 1e6).toFixed(0).padStart(5);
    lines.push(
      `${v.name.padEnd(28)} ${rate.toFixed(0).padStart(6)}/s ${(rate / rawRate).toFixed(2)}×  p50 ${percentile(sorted, 50).toFixed(1)} p99 ${percentile(sorted, 99).toFixed(1)} ms` +
        `  CPU/signature µs: ${v.pid ? 'client' : 'this process'} ${perSign(v.benchCpu)}` +
        (v.pid
          ? `, signer ${perSign(v.signerCpu)} (main thread ${perSign(v.signerMain).trim()}, kernel ${perSign(v.signerSystem).trim()})`
          : '') +
        (v.pid && STORE ? `, PostgreSQL ${perSign(v.pgCpu)}` : '') +
        (t.errors ? `  errors ${t.errors}` : ''),
    );
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-bench-'));
  fs.chmodSync(dir, 0o755);
  const database = STORE
    ? await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort() })
    : undefined;
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  const run: Run = { dir, database, token, approver: benchApprover(), children: [], clients: [] };
  try {
    const raw = await rawVariant(run);
    const chosen = (await checkoutVariants(run)).filter(
      (v) => ONLY.length === 0 || ONLY.some((n) => v.name.includes(n)),
    );
    const variants = [raw.variant, ...chosen];
    await alternate(variants, database && path.join(dir, 'pg', 'data'));
    process.stdout.write(report(variants));
    // What any signer must do besides the HSM, on this machine: the ratio's ceiling (./support/signer-ratio-bound.ts).
    const rawTotal = raw.variant.total!;
    const bound = await raw.bound((raw.variant.benchCpu / rawTotal.ops) * 1e6);
    process.stdout.write(`${signerRatioBoundLine(bound)}\n`);
    await raw.close();
  } finally {
    for (const c of run.clients) c.close();
    for (const c of run.children) await stopChild(c);
    await database?.stop();
  }
}

runBench(main);

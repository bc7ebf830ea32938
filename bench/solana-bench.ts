/**
 * `npm run bench:solana` (also the last part of `npm run bench`): Solana `exact` pays per second through the
 * whole pay path — HTTP, the policy decision, the reservation and record in PostgreSQL, the signer's decode of
 * the message and its SoftHSM Ed25519 signature, the message composed as the official @x402/svm client
 * composes it on the offline chain's latest blockhash — next to the ceiling measured in the same run: raw SoftHSM
 * Ed25519 signing (CKM_EDDSA) through the signer's backend, 8 loops. Payments spread over BENCH_SOLANA_WALLETS
 * wallets (default 100) and on one hot wallet.
 *
 * The API and the signer run in processes of their own, as production starts them (compiled when current, their
 * start-up flags: ops/node-flags.ts); the API on the database and signer the bench set the wallets up through. The
 * load client and the offline chain's RPC run in this process. Before anything is measured, 32 wallets of the
 * warm-up's own pay three times each through the API. Options (env): BENCH_SECONDS (default 8),
 * BENCH_CONCURRENCY (default 32), BENCH_SOLANA_WALLETS (default 100), BENCH_CPU_PROFILE_DIR (V8 CPU profiles of the
 * API and the signer, written there when they stop; run the bench under `node --cpu-prof` for this process's). Each
 * pay phase's row gives the CPU a payment of the API, of the signer and of this process (the load and the chain's
 * RPC), from /proc.
 * Each pay phase alternates, one-second slices in turn, between wallets without a signed policy (the signer records
 * each spend in its store after release) and as many whose policy the bench's approver signed (the signer decides
 * on its own state and commits each spend before the signature leaves: docs/adr/0012-owner-signed-policies.md);
 * every wallet has paid once before: its first payment is a row of its own (each wallet once, 32 at a time), which
 * finds a key made a moment before (signer/backends/pkcs11/ed25519-token-keys.ts remembers it from its making).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { openBenchBackend } from './support/bench-token.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { startLocalSolana, type LocalSolana } from '../ops/solana/local-solana.js';
import {
  GENEROUS_RATE_LIMITS,
  mintAgentKey,
  startTestTreasury,
  type TestTreasury,
} from '../test/support/api-harness.js';
import { startApiProcess } from '../test/support/api-process.js';
import { nodeFlagsFor } from '../ops/node-flags.js';
import { drive, driveAlternating, percentile, type AlternatedResult, type DriveResult } from './support/closed-loop.js';
import { benchApprover, signBenchPolicies } from './support/owner-policy-bench.js';
import { readProcStat } from './support/proc-stat.js';
import { nodeArgsFor } from '../bin/build-freshness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_SOLANA_WALLETS ?? 100);
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
/** Wallets of the warm-up's own (each pays before anything is measured). */
const WARM_UP_WALLETS = 32;

/** A pay phase's result, with the CPU each process spent a payment over it (ms). */
type Phase = DriveResult & { apiMs: number; signerMs: number; benchMs: number };
/** CPU seconds each process has used so far. */
type CpuParts = { api: number; signer: number; bench: number };
/** Caps no bench payment reaches: the signer evaluates every rule and none refuses. */
const SIGNED_POLICY = { per_tx_cap_usd: '1000', daily_cap_usd: '1000000' };

/** Raw SoftHSM Ed25519 signatures per second through the backend (8 loops): the Solana row's ceiling. */
async function ed25519Ceiling(): Promise<DriveResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bench-ed25519-'));
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = token.softhsm2Conf;
  const backend = openBenchBackend(token);
  try {
    const account = await backend.createAccountKey();
    const key = await backend.createWalletKey(account, 'ed25519');
    const message = new Uint8Array(220).fill(7);
    return await drive(8, Math.min(SECONDS, 5), async () => {
      await backend.signEd25519(account, key.walletKeyRef, message);
      return true;
    });
  } finally {
    await backend.close();
    if (previous === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previous;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Stops the API with SIGTERM, as production does (its CPU profile is written as it exits); SIGKILL after 10 s. */
async function stopGracefully(api: Awaited<ReturnType<typeof startApiProcess>>): Promise<void> {
  if (api.child.exitCode === null && api.child.signalCode === null) {
    const exited = new Promise((resolve) => api.child.once('exit', resolve));
    api.child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  }
  await api.stop();
}

/** `count` funded Solana wallets of the bench's account (ids). */
async function makeWallets(t: TestTreasury, solana: LocalSolana, token: string, count: number): Promise<string[]> {
  const wallets: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await t.request('POST', '/v1/wallets', { token, body: { chain: 'solana-devnet', policy: {} } });
    if (res.status !== 201) throw new Error(`wallet: ${res.status} ${JSON.stringify(res.body)}`);
    await solana.faucet.fundUsdc(res.body.address as Address, 1_000_000_000n);
    wallets.push(res.body.id);
  }
  return wallets;
}

/** A variant's slices with the CPU a payment each process spent in them (ms): the API's, the signer's and this one's. */
function phase(r: AlternatedResult): Phase {
  const perPayMs = (seconds: number) => (seconds * 1000) / Math.max(r.ops, 1);
  const part = (name: keyof CpuParts) => perPayMs(r.cpuParts?.[name] ?? NaN);
  return { ...r, apiMs: part('api'), signerMs: part('signer'), benchMs: part('bench') };
}

/** Each wallet's first payment, `concurrency` at a time (each payment a wallet of its own), with each process's CPU. */
async function firstPayments(
  wallets: string[],
  pay: (walletId: string) => Promise<boolean>,
  parts: () => CpuParts,
): Promise<Phase> {
  const latenciesMs: number[] = [];
  let next = 0;
  let errors = 0;
  const before = parts();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < wallets.length; i = next++) {
        const t0 = process.hrtime.bigint();
        if (!(await pay(wallets[i]!))) errors++;
        latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = parts();
  latenciesMs.sort((a, b) => a - b);
  const ops = wallets.length - errors;
  const perPayMs = (cpuSeconds: number) => (cpuSeconds * 1000) / Math.max(ops, 1);
  return {
    ops,
    seconds,
    latenciesMs,
    errors,
    apiMs: perPayMs(after.api - before.api),
    signerMs: perPayMs(after.signer - before.signer),
    benchMs: perPayMs(after.bench - before.bench),
  };
}

function report(
  ceiling: DriveResult,
  first: Phase,
  spread: Record<'open' | 'signed', Phase>,
  hot: Record<'open' | 'signed', Phase>,
) {
  const perSecond = (r: DriveResult) => r.ops / r.seconds;
  const ms = (v: number) => v.toFixed(2).padStart(6);
  const cpu = (r: DriveResult | Phase) =>
    'apiMs' in r ? `${ms(r.apiMs)} | ${ms(r.signerMs)} | ${ms(r.benchMs)}` : '     – |      – |      –';
  const line = (name: string, r: DriveResult | Phase) =>
    `| ${name.padEnd(46)} | ${perSecond(r).toFixed(0).padStart(7)} | ${(perSecond(r) / perSecond(ceiling)).toFixed(2).padStart(5)}× | ${percentile(r.latenciesMs, 50).toFixed(1).padStart(6)} | ${percentile(r.latenciesMs, 99).toFixed(1).padStart(6)} | ${String(r.errors).padStart(6)} | ${cpu(r)} |`;
  const ratio = (p: Record<'open' | 'signed', Phase>) => (perSecond(p.signed) / perSecond(p.open)).toFixed(2);
  process.stdout.write(
    [
      '',
      `Solana pay path (BENCH_SECONDS=${SECONDS} slices of each, concurrency ${CONCURRENCY}; the API in a process of its own)`,
      '',
      '| phase                                          |   ops/s | vs Ed25519 ceiling | p50 ms | p99 ms | errors | CPU ms a pay: API | signer | load and RPC |',
      '|------------------------------------------------|---------|--------|--------|--------|--------|--------|--------|--------|',
      line(`Solana first pay of each of ${first.ops + first.errors} wallets`, first),
      line(`Solana pays, ${WALLETS} wallets`, spread.open),
      line(`Solana pays, ${WALLETS} wallets, owner-signed`, spread.signed),
      line('Solana pays, one hot wallet', hot.open),
      line('Solana pays, one hot wallet, owner-signed', hot.signed),
      line('ceiling: SoftHSM Ed25519 via backend (8 loops)', ceiling),
      '',
      `Owner-signed ÷ no signed policy, same slices: ${WALLETS} wallets ${ratio(spread)}×, one hot wallet ${ratio(hot)}×`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  process.stderr.write('• ceiling: raw SoftHSM Ed25519 sign through the backend\n');
  const ceiling = await ed25519Ceiling();
  const solana = await startLocalSolana();
  // Bench wallets are made with an api key: the approver is their policy authority.
  const approver = benchApprover();
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
  const profileFlags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const t = await startTestTreasury({
    extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl },
    signerEnv: { TREASURY_SIGNER_POLICY_APPROVER: approver.address },
    signerNodeArgs: nodeArgsFor('signer/main.ts', [...nodeFlagsFor('signer/main.ts'), ...profileFlags]),
  });
  let api: Awaited<ReturnType<typeof startApiProcess>> | undefined;
  try {
    const token = await mintAgentKey(t, `bench-solana-${Date.now()}`);
    const payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(payTo, 0n); // the payee's token account exists, as a seller's does
    const open = await makeWallets(t, solana, token, WALLETS);
    const signed = await makeWallets(t, solana, token, WALLETS);
    const warmUp = await makeWallets(t, solana, token, WARM_UP_WALLETS);
    await signBenchPolicies(t.baseUrl, token, signed, approver, SIGNED_POLICY);
    const requirements = {
      scheme: 'exact',
      network: DEVNET,
      asset: solana.mint,
      amount: '1000',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: solana.feePayer },
    };
    // The measured API: a process of its own on the same database and signer (this process's app stays idle).
    api = await startApiProcess(
      t.db,
      t.signer,
      {
        ...GENEROUS_RATE_LIMITS,
        TREASURY_SOLANA_RPC_URL: solana.rpcUrl,
        TREASURY_PUBLIC_URL: 'http://treasury.test',
        TREASURY_VERIFY_ALLOW_PRIVATE: '1',
      },
      { nodeArgs: nodeArgsFor('src/api/main.ts', [...nodeFlagsFor('src/api/main.ts'), ...profileFlags]) },
    );
    const payUrl = (walletId: string) => `${api!.url}/v1/wallets/${walletId}/pay`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const body = JSON.stringify({ payment_requirements: requirements });
    const pay = async (walletId: string) => {
      const res = await fetch(payUrl(walletId), { method: 'POST', headers, body });
      await res.arrayBuffer();
      return res.status === 200;
    };
    const apiPid = api.child.pid;
    const signerPid = t.signer.child.pid;
    const parts = (): CpuParts => {
      const here = process.cpuUsage();
      return {
        api: readProcStat(apiPid)?.cpuSeconds ?? NaN,
        signer: readProcStat(signerPid)?.cpuSeconds ?? NaN,
        bench: (here.user + here.system) / 1e6,
      };
    };
    // The API process has just started: its first payments, and its repeat ones, are compiled before any is measured.
    process.stderr.write(`• warm-up: ${WARM_UP_WALLETS} wallets of its own, each paying three times\n`);
    for (let round = 0; round < 3; round++) {
      const paid = await Promise.all(warmUp.map((id) => pay(id)));
      if (paid.includes(false)) throw new Error('a warm-up payment failed');
    }
    process.stderr.write(`• every wallet's first payment\n`);
    const first = await firstPayments([...open, ...signed], pay, parts);
    if (first.errors > 0) throw new Error(`${first.errors} first payments failed`);
    const alternate = async (variants: Record<'open' | 'signed', (i: number) => Promise<boolean>>) => {
      const r = await driveAlternating(variants, { rounds: SECONDS, concurrency: CONCURRENCY, parts });
      return { open: phase(r.open), signed: phase(r.signed) };
    };
    process.stderr.write(`• Solana pays over ${WALLETS} wallets, each kind in turn\n`);
    const spread = await alternate({
      open: (i) => pay(open[i % open.length]!),
      signed: (i) => pay(signed[i % signed.length]!),
    });
    process.stderr.write('• Solana pays on one hot wallet, each kind in turn\n');
    const hot = await alternate({ open: () => pay(open[0]!), signed: () => pay(signed[0]!) });
    report(ceiling, first, spread, hot);
  } finally {
    if (api) await stopGracefully(api);
    await t.stop();
    await solana.stop();
  }
}

await main();
process.exit(0);

/**
 * `npm run bench:solana` (also the last part of `npm run bench`): Solana `exact` pays per second through the
 * whole pay path — HTTP, the policy decision, the reservation and record in PostgreSQL, the signer's decode of
 * the message and its SoftHSM Ed25519 signature, the message built with the official @x402/svm client on the
 * offline chain's latest blockhash — next to the ceiling measured in the same run: raw SoftHSM Ed25519 signing
 * (CKM_EDDSA) through the signer's backend, 8 loops. Payments spread over BENCH_SOLANA_WALLETS wallets
 * (default 100) and on one hot wallet.
 *
 * What it is not: the EVM rows' setting. The API runs in this process (the test harness's, with the offline
 * chain's RPC in this process too) and the load client shares its event loop, so the ratio is lower than a
 * separate API process would give; compare it with itself from run to run. Options (env): BENCH_SECONDS
 * (default 8), BENCH_CONCURRENCY (default 32), BENCH_SOLANA_WALLETS (default 100), BENCH_CPU_PROFILE_DIR (a V8 CPU
 * profile of the signer, written there when it stops; run the bench under `node --cpu-prof` for this process's). Each pay phase's row gives the
 * CPU a payment of this process (the API, the load and the chain's RPC) and of the signer's (/proc).
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
import { mintAgentKey, startTestTreasury, type TestTreasury } from '../test/support/api-harness.js';
import { drive, driveAlternating, percentile, type AlternatedResult, type DriveResult } from './support/closed-loop.js';
import { benchApprover, signBenchPolicies } from './support/owner-policy-bench.js';
import { readProcStat } from './support/proc-stat.js';
import { nodeArgsFor } from '../bin/build-freshness.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_SOLANA_WALLETS ?? 100);
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

/** A pay phase's result, with the CPU each process spent a payment over it (ms). */
type Phase = DriveResult & { benchMs: number; signerMs: number };
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

/** A variant's slices with the CPU a payment each process spent in them (ms): this one, and the signer's. */
function phase(r: AlternatedResult): Phase {
  const perPayMs = (seconds: number) => (seconds * 1000) / Math.max(r.ops, 1);
  return { ...r, benchMs: perPayMs(r.cpuParts?.bench ?? NaN), signerMs: perPayMs(r.cpuParts?.signer ?? NaN) };
}

/** Each wallet's first payment, `concurrency` at a time (each payment a wallet of its own), with both processes' CPU. */
async function firstPayments(
  wallets: string[],
  pay: (walletId: string) => Promise<boolean>,
  parts: () => { bench: number; signer: number },
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
    benchMs: perPayMs(after.bench - before.bench),
    signerMs: perPayMs(after.signer - before.signer),
  };
}

function report(
  ceiling: DriveResult,
  first: Phase,
  spread: Record<'open' | 'signed', Phase>,
  hot: Record<'open' | 'signed', Phase>,
) {
  const perSecond = (r: DriveResult) => r.ops / r.seconds;
  const cpu = (r: DriveResult | Phase) =>
    'benchMs' in r ? `${r.benchMs.toFixed(2).padStart(6)} | ${r.signerMs.toFixed(2).padStart(6)}` : '     – |      –';
  const line = (name: string, r: DriveResult | Phase) =>
    `| ${name.padEnd(46)} | ${perSecond(r).toFixed(0).padStart(7)} | ${(perSecond(r) / perSecond(ceiling)).toFixed(2).padStart(5)}× | ${percentile(r.latenciesMs, 50).toFixed(1).padStart(6)} | ${percentile(r.latenciesMs, 99).toFixed(1).padStart(6)} | ${String(r.errors).padStart(6)} | ${cpu(r)} |`;
  const ratio = (p: Record<'open' | 'signed', Phase>) => (perSecond(p.signed) / perSecond(p.open)).toFixed(2);
  process.stdout.write(
    [
      '',
      `Solana pay path (BENCH_SECONDS=${SECONDS} slices of each, concurrency ${CONCURRENCY}; the API in the bench process)`,
      '',
      '| phase                                          |   ops/s | vs Ed25519 ceiling | p50 ms | p99 ms | errors | CPU ms a pay: this process | signer |',
      '|------------------------------------------------|---------|--------|--------|--------|--------|--------|--------|',
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
  const t = await startTestTreasury({
    extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl },
    signerEnv: { TREASURY_SIGNER_POLICY_APPROVER: approver.address },
    ...(profileDir
      ? { signerNodeArgs: nodeArgsFor('signer/main.ts', ['--cpu-prof', `--cpu-prof-dir=${profileDir}`]) }
      : {}),
  });
  try {
    const token = await mintAgentKey(t, `bench-solana-${Date.now()}`);
    const payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(payTo, 0n); // the payee's token account exists, as a seller's does
    const open = await makeWallets(t, solana, token, WALLETS);
    const signed = await makeWallets(t, solana, token, WALLETS);
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
    const pay = async (walletId: string) => {
      const res = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
        token,
        body: { payment_requirements: requirements },
      });
      return res.status === 200;
    };
    const signerPid = t.signer.child.pid;
    const parts = () => {
      const here = process.cpuUsage();
      return { bench: (here.user + here.system) / 1e6, signer: readProcStat(signerPid)?.cpuSeconds ?? NaN };
    };
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
    await t.stop();
    await solana.stop();
  }
}

await main();
process.exit(0);

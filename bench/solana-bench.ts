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
 * (default 8), BENCH_CONCURRENCY (default 32), BENCH_SOLANA_WALLETS (default 100). Each pay phase's row gives the
 * CPU a payment of this process (the API, the load and the chain's RPC) and of the signer's (/proc).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSigner, type Address } from '@solana/kit';
import { Pkcs11Backend } from '../signer/backends/pkcs11/pkcs11-backend.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { startLocalSolana } from '../ops/solana/local-solana.js';
import { mintAgentKey, startTestTreasury } from '../test/support/api-harness.js';
import { drive, percentile, type DriveResult } from './support/closed-loop.js';
import { readProcStat } from './support/proc-stat.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_SOLANA_WALLETS ?? 100);
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

/** A pay phase's result, with the CPU each process spent a payment over it (ms). */
type Phase = DriveResult & { benchMs: number; signerMs: number };

/** Raw SoftHSM Ed25519 signatures per second through the backend (8 loops): the Solana row's ceiling. */
async function ed25519Ceiling(): Promise<DriveResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bench-ed25519-'));
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = token.softhsm2Conf;
  const backend = Pkcs11Backend.open({
    kind: 'pkcs11',
    modulePath: token.modulePath,
    tokenLabel: token.tokenLabel,
    pin: fs.readFileSync(token.pinFile, 'utf8').trim(),
    kekLabel: token.kekLabel,
    sessions: 4,
    signInline: 'when_alone',
    cacheSize: 100,
    cacheTtlMs: 600_000,
  });
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

async function main(): Promise<void> {
  process.stderr.write('• ceiling: raw SoftHSM Ed25519 sign through the backend\n');
  const ceiling = await ed25519Ceiling();
  const solana = await startLocalSolana();
  const t = await startTestTreasury({ extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl } });
  try {
    const token = await mintAgentKey(t, `bench-solana-${Date.now()}`);
    const payTo = (await generateKeyPairSigner()).address;
    await solana.faucet.fundUsdc(payTo, 0n); // the payee's token account exists, as a seller's does
    const wallets: string[] = [];
    for (let i = 0; i < WALLETS; i++) {
      const res = await t.request('POST', '/v1/wallets', { token, body: { chain: 'solana-devnet', policy: {} } });
      if (res.status !== 201) throw new Error(`wallet: ${res.status} ${JSON.stringify(res.body)}`);
      await solana.faucet.fundUsdc(res.body.address as Address, 1_000_000_000n);
      wallets.push(res.body.id);
    }
    const requirements = {
      scheme: 'exact',
      network: DEVNET,
      asset: solana.mint,
      amount: '1000',
      payTo,
      maxTimeoutSeconds: 60,
      extra: { feePayer: solana.feePayer },
    };
    const pay = (walletId: string) => async () => {
      const res = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
        token,
        body: { payment_requirements: requirements },
      });
      return res.status === 200;
    };
    const signerPid = t.signer.child.pid;
    /** The phase's result with each process's CPU a payment over it: this one (API, load, RPC) and the signer. */
    const measured = async (run: () => Promise<DriveResult>): Promise<Phase> => {
      const here = process.cpuUsage();
      const signer = readProcStat(signerPid)?.cpuSeconds ?? NaN;
      const result = await run();
      const spent = process.cpuUsage(here);
      const hereSeconds = (spent.user + spent.system) / 1e6;
      const signerSeconds = (readProcStat(signerPid)?.cpuSeconds ?? NaN) - signer;
      const perPayMs = (seconds: number) => (seconds * 1000) / Math.max(result.ops, 1);
      return { ...result, benchMs: perPayMs(hereSeconds), signerMs: perPayMs(signerSeconds) };
    };
    process.stderr.write(`• Solana pays over ${WALLETS} wallets\n`);
    const spread = await measured(() => drive(CONCURRENCY, SECONDS, (i) => pay(wallets[i % wallets.length]!)()));
    process.stderr.write('• Solana pays on one hot wallet\n');
    const hot = await measured(() => drive(CONCURRENCY, SECONDS, pay(wallets[0]!)));
    const perSecond = (r: DriveResult) => r.ops / r.seconds;
    const cpu = (r: DriveResult | Phase) =>
      'benchMs' in r ? `${r.benchMs.toFixed(2).padStart(6)} | ${r.signerMs.toFixed(2).padStart(6)}` : '     – |      –';
    const line = (name: string, r: DriveResult | Phase) =>
      `| ${name.padEnd(44)} | ${perSecond(r).toFixed(0).padStart(7)} | ${(perSecond(r) / perSecond(ceiling)).toFixed(2).padStart(5)}× | ${percentile(r.latenciesMs, 50).toFixed(1).padStart(6)} | ${percentile(r.latenciesMs, 99).toFixed(1).padStart(6)} | ${String(r.errors).padStart(6)} | ${cpu(r)} |`;
    process.stdout.write(
      [
        '',
        `Solana pay path (BENCH_SECONDS=${SECONDS}, concurrency ${CONCURRENCY}; the API in the bench process)`,
        '',
        '| phase                                        |   ops/s | vs Ed25519 ceiling | p50 ms | p99 ms | errors | CPU ms a pay: this process | signer |',
        '|----------------------------------------------|---------|--------|--------|--------|--------|--------|--------|',
        line(`Solana pays, ${WALLETS} wallets`, spread),
        line('Solana pays, one hot wallet', hot),
        line('ceiling: SoftHSM Ed25519 via backend (8 loops)', ceiling),
        '',
      ].join('\n'),
    );
  } finally {
    await t.stop();
    await solana.stop();
  }
}

await main();
process.exit(0);

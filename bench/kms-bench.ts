/**
 * `npm run bench:kms`: pay throughput through HTTP with treasury-signer on the AWS KMS key backend against
 * the KMS emulator (ops/kms-emulator/, a test double run as its own process, as KMS is another machine), next
 * to the ceilings measured in the same run: raw KMS Sign calls to the emulator through the real SDK, and the
 * signer process alone through its socket. Two pay phases: the signer's own KMS sign rate off
 * (TREASURY_KMS_SIGN_RATE_PER_SECOND=0), and at the signer's documented default (the variable unset: the
 * default ECC Sign quota share, docs/aws-kms.md). Prints one table with ratios in the house's format
 * (bench/pay-bench.ts), then KMS calls and CPU per payment.
 *
 * What it says and what it does not: on one machine the emulator, PostgreSQL, the API, the signer and this
 * load generator share the cores, so the "KMS Sign" ceiling is this machine's cost of a signed HTTP round
 * trip plus a noble signature, not AWS's (a real KMS Sign costs a network round trip, ≈5–20 ms, and is bound
 * by the account's quota). The ratios say how much of that ceiling the pay path keeps.
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 32), BENCH_WALLETS (default 200),
 * BENCH_KMS_SIGN_RATE (phase (b)'s TREASURY_KMS_SIGN_RATE_PER_SECOND; default unset: the signer's default).
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { KMSClient, SignCommand, CreateKeyCommand } from '@aws-sdk/client-kms';
import { createKnex, migrateLatest } from '../src/api/db/knex-client.js';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { freePort } from '../test/support/test-database.js';
import { GENEROUS_SIGNER_LIMITS } from '../test/support/signer-harness.js';
import { SignerClient } from '../signer/protocol/signer-client.js';
import { KeepAliveLoadClient } from './support/keep-alive-load-client.js';
import * as parts from './support/service-bench-parts.js';
import { drive as driveLoops, type DriveResult } from './support/closed-loop.js';
import { readProcStat } from './support/proc-stat.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 200);
const SIGN_RATE_B = process.env.BENCH_KMS_SIGN_RATE || undefined;
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

type Result = DriveResult;

interface EmulatorInfo {
  kms_emulator: string;
  region: string;
  client_env: Record<string, string>;
}

interface EmulatorStats {
  received: Record<string, number>;
  errors: Record<string, Record<string, number>>;
  signatures: number;
}

const rate = (r: Result) => r.ops / r.seconds;
const cpuSeconds = (pid: number | undefined) => readProcStat(pid)?.cpuSeconds ?? NaN;

/** Runs `op` from `concurrency` loops for `seconds` (./support/closed-loop.ts), an `op` that throws counted as an error. */
const drive = (concurrency: number, seconds: number, op: (i: number) => Promise<boolean>) =>
  driveLoops(concurrency, seconds, (i) => op(i).catch(() => false));

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-kms-bench-'));
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort() });
  try {
    const knex = createKnex(database.connectionString, 4, 'treasury-kms-bench');
    await migrateLatest(knex);
    await knex.destroy();

    process.stderr.write('• starting the KMS emulator (a test double) as its own process\n');
    const emulatorStart = await parts.startTsChild('ops/kms-emulator/main.ts', {
      args: ['--port', '0'],
      ready: (line) => line.startsWith('{"kms_emulator"'),
    });
    const emulator = emulatorStart.child;
    children.push(emulator);
    const kms = JSON.parse(emulatorStart.line) as EmulatorInfo;
    const emulatorStats = async () =>
      (await (await fetch(`${kms.kms_emulator}/__emulator/stats`)).json()) as EmulatorStats;

    process.stderr.write('• ceiling: raw KMS Sign through the SDK (16 loops)\n');
    const sdk = new KMSClient({
      region: kms.region,
      endpoint: kms.kms_emulator,
      credentials: {
        accessKeyId: kms.client_env['AWS_ACCESS_KEY_ID']!,
        secretAccessKey: kms.client_env['AWS_SECRET_ACCESS_KEY']!,
      },
      maxAttempts: 1,
    });
    const keyId = (await sdk.send(new CreateKeyCommand({ KeySpec: 'ECC_SECG_P256K1', KeyUsage: 'SIGN_VERIFY' })))
      .KeyMetadata!.KeyId!;
    const signRaw = async () => {
      await sdk.send(
        new SignCommand({
          KeyId: keyId,
          Message: randomBytes(32),
          MessageType: 'DIGEST',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      );
      return true;
    };
    for (let i = 0; i < 100; i++) await signRaw();
    const emulatorCpuBefore = cpuSeconds(emulator.pid);
    const rawSign = await drive(16, Math.min(SECONDS, 5), signRaw);
    const emulatorCpuPerSign = ((cpuSeconds(emulator.pid) - emulatorCpuBefore) / rawSign.ops) * 1e6;
    sdk.destroy();

    const socket = path.join(dir, 'signer.sock');
    const signerEnv = (signRate: string | undefined): NodeJS.ProcessEnv => ({
      TREASURY_SIGNER_SOCKET: socket,
      TREASURY_KEY_BACKEND: 'aws-kms',
      TREASURY_SIGNER_BACKEND: undefined,
      TREASURY_KMS_REGION: kms.region,
      TREASURY_KMS_ENDPOINT: kms.kms_emulator,
      TREASURY_KMS_SIGN_RATE_PER_SECOND: signRate,
      AWS_PROFILE: undefined,
      AWS_SESSION_TOKEN: undefined,
      AWS_ACCESS_KEY_ID: kms.client_env['AWS_ACCESS_KEY_ID'],
      AWS_SECRET_ACCESS_KEY: kms.client_env['AWS_SECRET_ACCESS_KEY'],
      AWS_EC2_METADATA_DISABLED: 'true',
      ...GENEROUS_SIGNER_LIMITS,
    });
    const signerReady = (line: string) => line.includes('"msg":"signer ready"');
    const startSigner = async (signRate: string | undefined) => {
      const started = await parts.startTsChild('signer/main.ts', { env: signerEnv(signRate), ready: signerReady });
      const configured = (JSON.parse(started.line) as { kms_sign_rate_per_second?: number }).kms_sign_rate_per_second;
      return { child: started.child, signRate: configured };
    };

    process.stderr.write('• starting treasury-signer on aws-kms, its sign rate off\n');
    let signer = await startSigner('0');
    children.push(signer.child);
    process.stderr.write('• ceiling: the signer process through its socket (8 loops)\n');
    const signerClient = new SignerClient({ socketPath: socket });
    const signerAccount = (await signerClient.createAccountKey()).account_key_ref;
    const signerWallet = await signerClient.createWalletKey({ account_key_ref: signerAccount });
    const signOneAuthorization = parts.signerSignOnce(signerClient, signerAccount, signerWallet, USDC, SELLER);
    const signOnce = async () => {
      await signOneAuthorization();
      return true;
    };
    for (let i = 0; i < 100; i++) await signOnce();
    const signerAlone = await drive(8, Math.min(SECONDS, 5), signOnce);
    signerClient.close();

    const apiPort = await freePort();
    const admin = `adm_${randomBytes(24).toString('base64url')}`;
    const startApi = () =>
      parts.startBenchApi({
        databaseUrl: database.connectionString,
        signerSocket: socket,
        adminToken: admin,
        port: apiPort,
      });
    let api = await startApi();
    children.push(api);
    const base = `http://127.0.0.1:${apiPort}`;
    const post = parts.benchPost(base);
    const minted = await post('/v1/treasury', admin, { owner_type: 'bench', owner_id: 'kms-bench' });
    const apiKey = minted.body['api_key'] as string;
    process.stderr.write(`• creating ${WALLETS} wallets (a KMS key each)\n`);
    const walletStarted = performance.now();
    const walletIds = await parts.createBenchWallets(post, apiKey, WALLETS);
    const walletsPerSecond = WALLETS / ((performance.now() - walletStarted) / 1000);

    const payBody = Buffer.from(JSON.stringify(parts.benchPayBody(USDC, SELLER)));
    const payHeaders = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const failures = new Map<string, number>();
    const payPhase = async (label: string) => {
      const client = new KeepAliveLoadClient({ host: '127.0.0.1', port: apiPort, connections: CONCURRENCY });
      const payOnce = async (i: number) => {
        const status = await client.request(
          'POST',
          `/v1/wallets/${walletIds[(i * 7919) % walletIds.length]!}/pay`,
          payHeaders,
          payBody,
        );
        if (status !== 200) failures.set(`${label} ${status}`, (failures.get(`${label} ${status}`) ?? 0) + 1);
        return status === 200;
      };
      // Warm-up: every wallet once (the signer reads and caches each key's public key), then 2 s of load.
      for (let i = 0; i < walletIds.length; i += CONCURRENCY)
        await Promise.all(
          Array.from({ length: Math.min(CONCURRENCY, walletIds.length - i) }, (_, j) => payOnce(i + j)),
        );
      await drive(CONCURRENCY, 2, payOnce);
      const statsBefore = await emulatorStats();
      const cpuBefore = {
        signer: cpuSeconds(signer.child.pid),
        api: cpuSeconds(api.pid),
        emulator: cpuSeconds(emulator.pid),
      };
      const result = await drive(CONCURRENCY, SECONDS, payOnce);
      const statsAfter = await emulatorStats();
      const per = (n: number) => (n / result.ops).toFixed(2);
      const cpu = (name: 'signer' | 'api' | 'emulator', pid: number | undefined) =>
        (((cpuSeconds(pid) - cpuBefore[name]) / result.ops) * 1e6).toFixed(0);
      client.close();
      const signs = (statsAfter.received['Sign'] ?? 0) - (statsBefore.received['Sign'] ?? 0);
      const throttled =
        (statsAfter.errors['Sign']?.['ThrottlingException'] ?? 0) -
        (statsBefore.errors['Sign']?.['ThrottlingException'] ?? 0);
      const line = `${label}: KMS Sign requests per pay ${per(signs)} (throttled by the emulator: ${throttled}); CPU per pay: API ${cpu('api', api.pid)} µs, signer ${cpu('signer', signer.child.pid)} µs, emulator ${cpu('emulator', emulator.pid)} µs`;
      return { result, line };
    };

    process.stderr.write(
      `• pay (a): ${WALLETS} wallets, ${CONCURRENCY} concurrent, ${SECONDS} s, signer's KMS sign rate off\n`,
    );
    const rateOff = await payPhase('(a)');

    process.stderr.write('• restarting treasury-signer and treasury-api with the sign rate of phase (b)\n');
    await parts.stopChild(api);
    await parts.stopChild(signer.child);
    signer = await startSigner(SIGN_RATE_B);
    children.push(signer.child);
    api = await startApi();
    children.push(api);
    process.stderr.write(
      `• pay (b): ${WALLETS} wallets, ${CONCURRENCY} concurrent, ${SECONDS} s, sign rate ${signer.signRate}/s${SIGN_RATE_B === undefined ? ' (default)' : ''}\n`,
    );
    const rateDefault = await payPhase('(b)');

    const { header, rule, row } = parts.resultTable(58, 40);
    const lines = [
      '',
      `Treasury pay benchmark on AWS KMS (the KMS emulator, a test double) — ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
      '',
      header,
      rule,
      row('ceiling: emulator KMS Sign via the SDK (16 loops)', rawSign, []),
      row('ceiling: signer on aws-kms via socket (8 loops)', signerAlone, [['KMS Sign', rawSign]]),
      row(`pay via HTTP, ${WALLETS} wallets, sign rate off (${CONCURRENCY} cl.)`, rateOff.result, [
        ['KMS Sign', rawSign],
        ['signer', signerAlone],
      ]),
      row(
        `pay via HTTP, ${WALLETS} wallets, sign rate ${signer.signRate}/s${SIGN_RATE_B === undefined ? ' (dflt)' : ''} (${CONCURRENCY} cl.)`,
        rateDefault.result,
        [
          ['KMS Sign', rawSign],
          ['signer', signerAlone],
        ],
      ),
      '',
      ...((signer.signRate ?? 0) > rate(rawSign)
        ? [
            `the signer's sign rate in (b), ${signer.signRate}/s, is above this machine's KMS Sign ceiling (${rate(rawSign).toFixed(0)}/s): it does not bind here (BENCH_KMS_SIGN_RATE sets a lower one)`,
          ]
        : []),
      `emulator CPU per raw Sign (SigV4 check, JSON, noble signature): ${emulatorCpuPerSign.toFixed(0)} µs; wallet creation (CreateKey + CreateAlias + GetPublicKey through the signer): ${walletsPerSecond.toFixed(0)} wallets/s`,
      rateOff.line,
      rateDefault.line,
      ...parts.failureLines(failures),
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    for (const child of children.reverse()) await parts.stopChild(child);
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

parts.runBench(main);

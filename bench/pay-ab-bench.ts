/**
 * `npm run bench:pay-ab`: two or more checkouts' pay paths in one run, in alternating one-second slices, so that a
 * machine whose speed drifts, or that other work shares, slows every checkout alike and their ratio is the figure
 * (`npm run bench` run once per checkout cannot show a difference of a few per cent on such a machine: its rates
 * moved by half between runs minutes apart). Each checkout gets its own treasury-signer and treasury-api, started as
 * `npm run bench` starts them (./support/pay-bench-services.ts: its build when current, its start-up flags), on one
 * embedded PostgreSQL and one SoftHSM token; the signers keep no policy store (the store's own cost is compared by
 * `npm run bench`, ./support/store-cost-ab.ts). Each checkout pays its own share of the wallets (an API remembers a
 * wallet's spend state, and a state another API moved is read again), (a) over its share and (b) on its own hot
 * wallet, after every wallet was paid once and 3 s of load.
 *
 * Prints, per phase and checkout: the rate, its ratio to the first checkout (over the whole comparison, and the
 * median and range of the rounds' ratios), and the CPU per payment of its API and of its signer (their processes'
 * own counters, which other work on the machine moves far less than the rates), with PostgreSQL's and the machine's.
 *
 * Options (env): BENCH_PAY_ROOTS (`label=path,…`, at least two; e.g. `base=/tmp/base,new=.`; `label=path=KEY:VALUE;…`
 * also sets that checkout's signer's environment, and `NODE:<binary>` the Node both its services run on —
 * `n20=.,n24=.=NODE:node_modules/.cache/treasury-node/24.22.3/bin/node` compares the images' Node with this
 * machine's (../ops/node/images-node.sh fetches it) — ./support/bench-checkouts.ts; each checkout built
 * with `npm run build`, or run from its sources through tsx), BENCH_ROUNDS (default 10: one slice of each checkout a
 * round), BENCH_CONCURRENCY (default 32), BENCH_WALLETS (default 1000, shared out). The checkouts must agree on the
 * database's schema: it is migrated by this checkout. Not for tests: it leaves its temporary directory's removal to
 * the OS.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createKnex, migrateLatest } from '../src/api/db/knex-client.js';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { initSoftHsmToken } from '../ops/softhsm/init-token.js';
import { freePort } from '../test/support/test-database.js';
import {
  benchCode,
  benchPayBody,
  benchPost,
  createBenchWallets,
  startBenchApi,
  startTsChild,
  stopChild,
} from './support/service-bench-parts.js';
import { benchSignerEnv } from './support/bench-token.js';
import { parseBenchCheckouts, type BenchCheckout } from './support/bench-checkouts.js';
import { childNodeFlags } from './support/pay-bench-services.js';
import { driveAlternating, drive, type AlternatedResult } from './support/closed-loop.js';
import { KeepAliveLoadClient } from './support/keep-alive-load-client.js';
import { PayLoad } from './support/pay-bench-load.js';
import { processCpuSeconds, machineSeconds } from './support/pay-bench-cpu.js';
import { postgresProcessCpu } from './support/postgres-process-cpu.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 1000);
const USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const SELLER = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** BENCH_PAY_ROOTS read: each checkout's label and absolute path. */
function roots(): BenchCheckout[] {
  const parsed = parseBenchCheckouts(process.env.BENCH_PAY_ROOTS ?? '', 'BENCH_PAY_ROOTS');
  if (parsed.length < 2) throw new Error('BENCH_PAY_ROOTS names at least two checkouts: label=path,label=path');
  return parsed;
}

/** The median of `values` and their range, as `m (lo–hi)`. */
function medianAndRange(values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return `${m.toFixed(3)} (${s[0]!.toFixed(3)}–${s[s.length - 1]!.toFixed(3)})`;
}

interface Path {
  label: string;
  root: string;
  code: 'dist' | 'sources';
  /** The Node version its services run on. */
  nodeVersion: string;
  api: ChildProcess;
  signer: ChildProcess;
  client: KeepAliveLoadClient;
  wallets: string[];
  payOnce: (walletId: string) => Promise<boolean>;
}

async function main(): Promise<void> {
  const checkouts = roots();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-pay-ab-'));
  fs.chmodSync(dir, 0o755);
  const children: ChildProcess[] = [];
  const pgDataDir = path.join(dir, 'pg', 'data');
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort() });
  const paths: Path[] = [];
  try {
    const knex = createKnex(database.connectionString, 4, 'treasury-bench');
    await migrateLatest(knex);
    await knex.destroy();
    const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
    const admin = `adm_${randomBytes(24).toString('base64url')}`;
    let load: PayLoad | undefined;
    let firstPort = 0;
    for (const { label, root, signerEnv, node } of checkouts) {
      process.stderr.write(
        `• starting ${label}'s treasury-signer and treasury-api (${root}, ${benchCode(root)}${node ? `, ${node}` : ''})\n`,
      );
      const socket = path.join(dir, `signer-${paths.length}.sock`);
      const signer = (
        await startTsChild('signer/main.ts', {
          root,
          env: { TREASURY_SIGNER_SOCKET: socket, ...benchSignerEnv(token), ...signerEnv },
          nodeFlags: childNodeFlags('signer/main.ts'),
          ready: (line) => line.includes('"msg":"signer ready"'),
          node,
        })
      ).child;
      children.push(signer);
      const port = await freePort();
      const api = await startBenchApi({
        root,
        databaseUrl: database.connectionString,
        signerSocket: socket,
        adminToken: admin,
        port,
        nodeFlags: childNodeFlags('src/api/main.ts'),
        node,
      });
      children.push(api);
      const client = new KeepAliveLoadClient({ host: '127.0.0.1', port, connections: CONCURRENCY });
      if (!load) {
        firstPort = port;
        const minted = await benchPost(`http://127.0.0.1:${port}`)('/v1/treasury', admin, {
          owner_type: 'bench',
          owner_id: 'bench',
        });
        load = new PayLoad({
          port,
          connections: CONCURRENCY,
          apiKey: minted.body.api_key as string,
          payBody: benchPayBody(USDC, SELLER),
          idempotencyKeys: true,
        });
      }
      paths.push({
        label,
        root,
        code: benchCode(root),
        nodeVersion: node ? execFileSync(node, ['--version'], { encoding: 'utf8' }).trim() : process.version,
        api,
        signer,
        client,
        wallets: [],
        payOnce: load.payThrough(client, ` ${label}`),
      });
    }
    const payLoad = load!;
    process.stderr.write(`• creating ${WALLETS} wallets\n`);
    const apiKey = payLoad.headers.authorization!.slice('Bearer '.length);
    const walletIds = await createBenchWallets(benchPost(`http://127.0.0.1:${firstPort}`), apiKey, WALLETS);
    walletIds.forEach((id, i) => paths[i % paths.length]!.wallets.push(id));

    process.stderr.write('• warm-up: each wallet once through its checkout, then 3 s of each\n');
    payLoad.phase = 'warm-up';
    for (const p of paths) {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < p.wallets.length) await p.payOnce(p.wallets[next++]!);
        }),
      );
      await drive(CONCURRENCY, 3, (i) => p.payOnce(p.wallets[(i * 7919) % p.wallets.length]!));
    }

    const parts = () => {
      const out: Record<string, number> = {};
      for (const p of paths) {
        out[`${p.label} API`] = processCpuSeconds(p.api.pid);
        out[`${p.label} signer`] = processCpuSeconds(p.signer.pid);
      }
      out.PostgreSQL = Object.values(postgresProcessCpu(pgDataDir)).reduce((t, v) => t + v, 0);
      out.machine = machineSeconds().busy;
      return out;
    };
    const lines: string[] = [
      `pay A/B: ${paths.map((p) => `${p.label}=${p.root} (${p.code}, Node ${p.nodeVersion})`).join(', ')}; ${os.cpus().length} cores, the bench on Node ${process.version}, ${new Date().toISOString()}`,
      `${ROUNDS} rounds of one-second slices, ${CONCURRENCY} concurrent; load average at the start ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    ];
    for (const phase of ['(a)', '(b)'] as const) {
      process.stderr.write(`• ${phase}: ${ROUNDS} rounds\n`);
      payLoad.phase = phase;
      const variants = Object.fromEntries(
        paths.map((p) => [
          p.label,
          phase === '(a)'
            ? (i: number) => p.payOnce(p.wallets[(i * 7919) % p.wallets.length]!)
            : () => p.payOnce(p.wallets[0]!),
        ]),
      );
      const result = await driveAlternating(variants, { rounds: ROUNDS, concurrency: CONCURRENCY, parts });
      lines.push(...report(phase, paths, result));
    }
    lines.push(
      `load average at the end ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    const failures = [...payLoad.failures].map(([k, n]) => `${k}: ${n}`);
    if (failures.length > 0) lines.push(`answers other than 200: ${failures.join(', ')}`);
    process.stdout.write(lines.join('\n') + '\n');
    payLoad.close();
  } finally {
    for (const p of paths) p.client.close();
    for (const child of children.reverse()) await stopChild(child);
    await database.stop();
  }
}

/** One phase's lines: each checkout's rate and ratio to the first, and CPU a payment of its processes and the rest. */
function report(phase: string, paths: Path[], result: Record<string, AlternatedResult>): string[] {
  const base = result[paths[0]!.label]!;
  const rate = (r: AlternatedResult) => r.ops / r.seconds;
  const us = (r: AlternatedResult, key: string) => ((r.cpuParts?.[key] ?? 0) / Math.max(1, r.ops)) * 1e6;
  const lines = [
    `${phase === '(a)' ? "(a) over each checkout's share of the wallets" : "(b) on each checkout's hot wallet"}:`,
  ];
  for (const p of paths) {
    const r = result[p.label]!;
    const rounds = r.slices.map((s, i) => s.ops / s.seconds / (base.slices[i]!.ops / base.slices[i]!.seconds));
    lines.push(
      `  ${p.label.padEnd(8)} ${rate(r).toFixed(0).padStart(5)}/s  ${(rate(r) / rate(base)).toFixed(3)}× of ${paths[0]!.label}, per round ${medianAndRange(rounds)}×;` +
        ` CPU a pay, µs: API ${us(r, `${p.label} API`).toFixed(0)}, signer ${us(r, `${p.label} signer`).toFixed(0)},` +
        ` PostgreSQL ${us(r, 'PostgreSQL').toFixed(0)}, machine ${us(r, 'machine').toFixed(0)}`,
    );
  }
  return lines;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

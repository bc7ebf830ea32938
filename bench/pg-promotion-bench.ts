/**
 * `npm run bench:pg-promotion`: what a statement's parameters cost the old generation, by how the statement is
 * sent to pg — pg's own promise (`client.query(config)`) or its callback form wrapped in a promise
 * (src/api/db/pg-callback-query.ts, what the pay path uses).
 *
 * What runs: an embedded PostgreSQL; for each form, in turns (BENCH_ROUNDS rounds, the order reversed every other
 * round), a child process under `--trace-gc-nvp` that sends BENCH_RATE prepared inserts a second for BENCH_SECONDS, one at a time,
 * each with a fresh ≈ 3 KB JSON document built by concatenation (as the pay path's decision write builds its
 * documents). The parent reads V8's lines for the young-generation collections inside the load (its first second
 * left out) and reports the bytes promoted to the old generation a second and a statement.
 *
 * Why: what the API promotes paces its full collections, whose pauses make the steady phase's slow requests
 * (docs/performance.md, "What the API promotes"). Not a test: figures move with the machine; the ratio is the figure.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/api/db/embedded-postgres.js';
import { callbackQuery } from '../src/api/db/pg-callback-query.js';
import { freePort } from '../test/support/test-database.js';
import { runBench } from './support/service-bench-parts.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RATE = Number(process.env.BENCH_RATE ?? 400);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const FORMS = ['promise', 'callback'] as const;
type Form = (typeof FORMS)[number];

/** A ≈ 3 KB JSON array of twelve rows, made by concatenation like the decision write's documents. */
function documentText(n: number): string {
  let text = '[';
  for (let i = 0; i < 12; i++)
    text += `${i ? ',' : ''}{"id":"d_${n}_${i}","note":"${'x'.repeat(200)}","at":${Date.now() + i}}`;
  return text + ']';
}

/** The child: BENCH_RATE inserts a second in `form` for BENCH_SECONDS; marks the load's start and end on stdout. */
async function child(form: Form, connectionString: string): Promise<void> {
  const client = new pg.Client(connectionString);
  await client.connect();
  const config = (n: number) => ({
    name: 'bench_insert',
    text: 'INSERT INTO promotion_bench (doc) SELECT $1::jsonb',
    values: [documentText(n)],
  });
  const send = async (n: number) => {
    if (form === 'promise') await client.query(config(n));
    else await callbackQuery(client, config(n));
  };
  await send(0);
  process.stdout.write(`LOAD-START ${Math.round(performance.now())}\n`);
  const start = performance.now();
  // One statement at a time, as the pay path's writer sends them (one in flight on its connection).
  for (let n = 1; performance.now() - start < SECONDS * 1000; n++) {
    const wait = start + (n * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await send(n);
  }
  process.stdout.write(`LOAD-END ${Math.round(performance.now())}\n`);
  await client.end();
}

interface Figures {
  scavenges: number;
  promotedKiBPerSecond: number;
  promotedBytesPerStatement: number;
}

/** V8's `--trace-gc-nvp` lines of one child: its young-generation collections inside the load, first second left out. */
function readFigures(stdout: string): Figures {
  const from = Number(/LOAD-START (\d+)/.exec(stdout)?.[1]) + 1000;
  const to = Number(/LOAD-END (\d+)/.exec(stdout)?.[1]);
  let scavenges = 0;
  let promoted = 0;
  for (const line of stdout.split('\n')) {
    const at = /(\d+) ms: pause=/.exec(line);
    if (!at || !line.includes(' gc=s ')) continue;
    const t = Number(at[1]);
    if (t < from || t > to) continue;
    scavenges++;
    promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  const seconds = (to - from) / 1000;
  return {
    scavenges,
    promotedKiBPerSecond: promoted / 1024 / seconds,
    promotedBytesPerStatement: promoted / (seconds * RATE),
  };
}

function runChild(form: Form, connectionString: string): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--trace-gc-nvp', '--import', 'tsx', path.join(HERE, 'pg-promotion-bench.ts'), 'child', form],
      { env: { ...process.env, PROMOTION_DATABASE_URL: connectionString }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    proc.on('error', reject);
    proc.on('exit', (code) => (code === 0 ? resolve(readFigures(out)) : reject(new Error(`child ${form}: ${code}`))));
  });
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-promotion-bench-'));
  fs.chmodSync(dir, 0o755);
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), port: await freePort() });
  try {
    const admin = new pg.Client(database.connectionString);
    await admin.connect();
    await admin.query('CREATE TABLE promotion_bench (id bigserial PRIMARY KEY, doc jsonb NOT NULL)');
    await admin.end();
    const runs: Record<Form, Figures[]> = { promise: [], callback: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const form of round % 2 ? [...FORMS].reverse() : FORMS) {
        const figures = await runChild(form, database.connectionString);
        runs[form].push(figures);
        process.stderr.write(
          `round ${round + 1}, ${form}: ${figures.promotedKiBPerSecond.toFixed(0)} KiB/s promoted\n`,
        );
      }
    }
    report(runs);
  } finally {
    await database.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function report(runs: Record<Form, Figures[]>): void {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const lines = [
    `pg promotion — ${os.cpus().length} cores, Node ${process.version}, ${RATE} prepared inserts/s with a ≈ 3 KB JSON parameter, ${SECONDS} s × ${ROUNDS} rounds each`,
    '',
    '| how the statement is sent | young collections | promoted KiB/s (per run) | promoted bytes a statement | ratio |',
    '|---|---|---|---|---|',
  ];
  const base = mean(runs.promise.map((f) => f.promotedKiBPerSecond));
  for (const form of FORMS) {
    const rows = runs[form];
    const rate = mean(rows.map((f) => f.promotedKiBPerSecond));
    lines.push(
      `| ${form === 'promise' ? "pg's promise, `client.query(config)`" : 'callback form in a promise (`callbackQuery`)'} | ${rows.map((f) => f.scavenges).join(', ')} | ${rate.toFixed(0)} (${rows.map((f) => f.promotedKiBPerSecond.toFixed(0)).join(', ')}) | ${mean(rows.map((f) => f.promotedBytesPerStatement)).toFixed(0)} | ${form === 'promise' ? '1.00' : `${(rate / base).toFixed(2)} × pg's promise`} |`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n');
}

if (process.argv[2] === 'child') {
  const form = process.argv[3] as Form;
  child(form, process.env.PROMOTION_DATABASE_URL!).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
} else {
  runBench(main);
}

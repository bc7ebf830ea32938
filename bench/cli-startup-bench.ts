/**
 * `npm run bench:cli`: start-up of the `xx` CLI, as a person feels it. Runs `node bin/xx.mjs --help` and
 * `node bin/xx.mjs whoami` (an agent PAT in XX_PAT, against a stub API in this process that answers
 * /v1/auth/whoami) BENCH_RUNS times each, on the compiled build (dist/, built first when older than the
 * sources) and on the TypeScript path (XX_USE_SOURCES=1, tsx), and prints one table in the house's format
 * (bench/pay-bench.ts): median and p90 wall time per run, the ratio to the ceiling measured in the same
 * run, `node -e 0` (the start-up of Node itself, which no CLI beats), and the median CPU time (user +
 * system) each process counted for itself as it exited. A reference row, `xx completion bash`, loads every
 * command module (what start-up cost before the CLI imported lazily, docs/cli.md "Start-up").
 *
 * What it says and what it does not: on a loaded machine absolute milliseconds move with the load; the
 * ratios to `node -e 0`, taken in the same run, interleaved, are what to compare between runs, and the CPU
 * time moves far less with the load than the wall time (a loaded machine mostly makes a process wait). It
 * times whole processes (spawn to exit), not the commands' work; the CPU time leaves out what Node spends
 * before the first module runs and after the exit event (the same in every row).
 *
 * Options (env): BENCH_RUNS (default 15), BENCH_BUILD=0 (never build; use dist/ as it is).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../bin/build-freshness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const XX = path.join(ROOT, 'bin', 'xx.mjs');

function ensureBuild(): void {
  // The rule bin/xx.mjs runs the bundle by: newer than package-lock.json and every source the CLI can import.
  if (buildIsCurrent('dist/cli/main.js', ['src', 'policy', 'base'], ['src/api', 'src/gate'])) return;
  if (process.env.BENCH_BUILD === '0') throw new Error('dist/ is older than the sources (npm run build)');
  process.stderr.write('dist/ is older than the sources: npm run build …\n');
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

/** Loaded first in every measured process: writes its CPU time (µs) to stderr as it exits. */
const CPU_REPORT = `data:text/javascript,process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\ncpu_us ' + (u.user + u.system) + '\\n'); })`;

/** Wall time of one process, spawn to exit, and the CPU time it reported, in ms; fails on an unexpected exit code. */
function timeRun(args: string[], env: NodeJS.ProcessEnv): Promise<{ wall: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--import', CPU_REPORT, ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = /^cpu_us (\d+)$/m.exec(stderr);
      if (code !== 0) reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`));
      else if (!cpu) reject(new Error(`${args.join(' ')} reported no CPU time: ${stderr}`));
      else resolve({ wall, cpu: Number(cpu[1]) / 1000 });
    });
  });
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function main(): Promise<void> {
  ensureBuild();
  const api = http.createServer((req, res) => {
    res.writeHead(req.url === '/v1/auth/whoami' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        req.url === '/v1/auth/whoami'
          ? { auth_type: 'pat', scope_type: 'agent', scope_id: 'ag_bench', token_id: 'pat_bench' }
          : { error_code: 'not_found', user_message: 'Not found.' },
      ),
    );
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'xx-bench-'));
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XX_PAT: `xx_pat_${'b'.repeat(24)}`,
    XX_API_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    NO_COLOR: '1',
  };
  const sources = { ...base, XX_USE_SOURCES: '1' };
  const cases: Array<{ name: string; args: string[]; env: NodeJS.ProcessEnv }> = [
    { name: 'ceiling: node -e 0', args: ['-e', '0'], env: base },
    { name: 'xx --help (compiled)', args: [XX, '--help'], env: base },
    { name: 'xx whoami (compiled)', args: [XX, 'whoami'], env: base },
    { name: 'xx --help (tsx, XX_USE_SOURCES=1)', args: [XX, '--help'], env: sources },
    { name: 'xx whoami (tsx, XX_USE_SOURCES=1)', args: [XX, 'whoami'], env: sources },
    { name: 'reference: xx completion bash', args: [XX, 'completion', 'bash'], env: base },
  ];
  const times = cases.map(() => [] as number[]);
  const cpus = cases.map(() => [] as number[]);
  for (const c of cases) await timeRun(c.args, c.env); // warm the file cache once
  // Interleaved, so a change of load during the run touches every row alike.
  for (let i = 0; i < RUNS; i++)
    for (const [k, c] of cases.entries()) {
      const { wall, cpu } = await timeRun(c.args, c.env);
      times[k]!.push(wall);
      cpus[k]!.push(cpu);
    }
  api.close();
  fs.rmSync(home, { recursive: true, force: true });

  const ceiling = percentile(times[0]!, 50);
  const row = (cells: string[]) =>
    `| ${cells[0]!.padEnd(38)} | ${cells
      .slice(1)
      .map((c) => c.padStart(9))
      .join(' | ')} |`;
  console.log(
    `\nxx start-up, ${RUNS} runs each, ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}`,
  );
  console.log(row(['measurement', 'median ms', 'p90 ms', 'ratio', 'CPU ms']));
  console.log(`|${'-'.repeat(40)}|${['', '', '', ''].map(() => '-'.repeat(11)).join('|')}|`);
  for (const [k, c] of cases.entries()) {
    const median = percentile(times[k]!, 50);
    const cells = [median.toFixed(0), percentile(times[k]!, 90).toFixed(0), `${(median / ceiling).toFixed(2)}×`];
    console.log(row([c.name, ...cells, percentile(cpus[k]!, 50).toFixed(0)]));
  }
  console.log('ratio: median over the median of `node -e 0` in this run (the floor no Node CLI goes below).');
  console.log('CPU ms: median user + system time each process counted for itself at exit.');
}

await main();

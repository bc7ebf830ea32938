/**
 * Where a profile of the API covers the measured phases: `npm run bench` marks each of (a) and (b) — and their
 * signed runs, (a signed) and (b signed) — on the clock V8's `--cpu-prof` profiles use (CLOCK_MONOTONIC in µs, as
 * `process.hrtime`), with its payments, so that ./summarise-cpu-profile.ts can read one phase alone and per payment
 * (`--phase`); with BENCH_PERF_DIR, it records the API with `perf record` over (a) and (b) (V8's profiles sample
 * wall time and charge a preempted system call to its caller: CPU shares are read from `perf`); with
 * BENCH_HEAP_PROFILE_DIR, it has the API sample what it allocates over them (./heap-sampling-probe.ts).
 *
 * Options (env): BENCH_CPU_PROFILE_DIR (the marks are written there as `phases.json`), BENCH_PERF_DIR (`api.perf.data`
 * there; the API then runs with `--perf-basic-prof`, ./pay-bench-services.ts), BENCH_HEAP_PROFILE_DIR (the API's
 * `<pid>.heapprofile` and the marks). Limits: Linux only for `perf`; a `perf` that is missing or refused is reported
 * on stderr and the phases run unrecorded.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** A phase on the profile's clock: µs of CLOCK_MONOTONIC, and the payments it answered. */
export interface PhaseMark {
  startMicros: number;
  endMicros: number;
  ops: number;
}

/** The marks file `--cpu-prof`'s directory holds beside the profiles. */
export const PHASE_MARKS_FILE = 'phases.json';

/** Now on the clock of V8's CPU profiles (µs). */
export function profileClockMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** Collects phase marks and writes them to BENCH_CPU_PROFILE_DIR (nothing without it). */
export class PhaseMarks {
  private readonly marks: Record<string, PhaseMark> = {};
  private readonly dirs = [process.env.BENCH_CPU_PROFILE_DIR, process.env.BENCH_HEAP_PROFILE_DIR].filter(
    (d): d is string => !!d,
  );

  /** Runs `phase`, marking it under `name` with the payments it reports. */
  async around<T extends { ops: number }>(name: string, phase: () => Promise<T>): Promise<T> {
    const startMicros = profileClockMicros();
    const result = await phase();
    this.marks[name] = { startMicros, endMicros: profileClockMicros(), ops: result.ops };
    for (const dir of this.dirs) {
      // A directory named but not made yet (V8 makes its own only when the services exit).
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, PHASE_MARKS_FILE), JSON.stringify(this.marks, null, 2));
    }
    return result;
  }
}

/** Reads the marks written beside a profile (undefined when there are none). */
export function readPhaseMarks(profileFile: string): Record<string, PhaseMark> | undefined {
  const file = path.join(path.dirname(profileFile), PHASE_MARKS_FILE);
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, PhaseMark>;
}

/**
 * Starts `perf record -g` on `pid` into BENCH_PERF_DIR/api.perf.data (999 samples a second); the returned function
 * stops it and waits until the file is written. Without BENCH_PERF_DIR (or `pid`), nothing is recorded.
 */
export function startPerfRecord(pid: number | undefined): () => Promise<void> {
  const dir = process.env.BENCH_PERF_DIR;
  if (!dir || pid === undefined) return () => Promise.resolve();
  fs.mkdirSync(dir, { recursive: true });
  const out = path.join(dir, 'api.perf.data');
  let child: ChildProcess | undefined;
  try {
    child = spawn('perf', ['record', '-F', '999', '-g', '-p', String(pid), '-o', out], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', (err) => process.stderr.write(`perf record did not start: ${err.message}\n`));
  } catch (err) {
    process.stderr.write(`perf record did not start: ${(err as Error).message}\n`);
    return () => Promise.resolve();
  }
  const started = child;
  return () =>
    new Promise<void>((resolve) => {
      if (started.exitCode !== null || started.pid === undefined) return resolve();
      started.once('exit', () => resolve());
      started.kill('SIGINT');
    });
}

/**
 * Starts the API's allocation sampling (./heap-sampling-probe.ts: a first SIGUSR2) when BENCH_HEAP_PROFILE_DIR is
 * set; the returned function stops it (a second SIGUSR2) and waits, at most 30 s, for `<pid>.heapprofile`.
 */
export function startHeapSampling(pid: number | undefined): () => Promise<void> {
  const dir = process.env.BENCH_HEAP_PROFILE_DIR;
  if (!dir || pid === undefined) return () => Promise.resolve();
  process.kill(pid, 'SIGUSR2');
  return async () => {
    const file = path.join(dir, `${pid}.heapprofile`);
    process.kill(pid, 'SIGUSR2');
    for (let i = 0; i < 300 && !fs.existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
    if (!fs.existsSync(file)) process.stderr.write(`no heap profile from the API in ${dir}\n`);
  };
}

/**
 * A process's context switches and CPU, its main thread apart from its other threads (libuv's pool — the
 * signer's HSM threads — and V8's platform threads), for the pay bench's hand-off accounting. A voluntary
 * switch is a thread that went to sleep (it waited for a socket, a lock or a condition, and something must
 * wake it again); an involuntary one is a thread preempted while it could still run. Read from
 * /proc/<pid>/task/<tid>/status and …/stat; a thread that exits between two samples takes its counts with it
 * (the services' threads live as long as they do).
 *
 * Limits: Linux only; undefined when the process is gone (or on another OS).
 */
import fs from 'node:fs';
import { readProcStat } from './proc-stat.js';

export interface ThreadCounts {
  voluntary: number;
  involuntary: number;
  cpuSeconds: number;
}

export interface ProcessThreads {
  main: ThreadCounts;
  /** Every other thread of the process, summed. */
  others: ThreadCounts;
  /** How many other threads there were. */
  otherThreads: number;
}

/** The two switch counters of one /proc/…/status text (NaN when a line is missing). */
export function parseSwitchCounts(status: string): Pick<ThreadCounts, 'voluntary' | 'involuntary'> {
  const read = (name: string) => {
    const at = status.indexOf(`\n${name}:`);
    if (at < 0) return NaN;
    const end = status.indexOf('\n', at + 1);
    return Number(status.slice(at + name.length + 2, end < 0 ? undefined : end).trim());
  };
  return { voluntary: read('voluntary_ctxt_switches'), involuntary: read('nonvoluntary_ctxt_switches') };
}

function readThread(pid: number, tid: number): ThreadCounts | undefined {
  try {
    const switches = parseSwitchCounts(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
    const stat = readProcStat(pid, tid);
    return stat ? { ...switches, cpuSeconds: stat.cpuSeconds } : undefined;
  } catch {
    return undefined;
  }
}

export function readProcessThreads(pid: number | undefined): ProcessThreads | undefined {
  if (pid === undefined) return undefined;
  let tids: number[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    return undefined;
  }
  const main = readThread(pid, pid);
  if (!main) return undefined;
  const others: ThreadCounts = { voluntary: 0, involuntary: 0, cpuSeconds: 0 };
  let otherThreads = 0;
  for (const tid of tids) {
    if (tid === pid) continue;
    const t = readThread(pid, tid);
    if (!t) continue;
    others.voluntary += t.voluntary;
    others.involuntary += t.involuntary;
    others.cpuSeconds += t.cpuSeconds;
    otherThreads++;
  }
  return { main, others, otherThreads };
}

/** What one thread group did a payment between two samples: switches a payment, CPU µs a payment. */
export interface ThreadsPerOp {
  voluntary: number;
  involuntary: number;
  cpuMicros: number;
}

function perOp(before: ThreadCounts, after: ThreadCounts, ops: number): ThreadsPerOp {
  return {
    voluntary: (after.voluntary - before.voluntary) / ops,
    involuntary: (after.involuntary - before.involuntary) / ops,
    cpuMicros: ((after.cpuSeconds - before.cpuSeconds) / ops) * 1e6,
  };
}

export function threadsPerOp(
  before: ProcessThreads | undefined,
  after: ProcessThreads | undefined,
  ops: number,
): { main: ThreadsPerOp; others: ThreadsPerOp } | undefined {
  if (!before || !after || !(ops > 0)) return undefined;
  return { main: perOp(before.main, after.main, ops), others: perOp(before.others, after.others, ops) };
}

const part = (label: string, t: ThreadsPerOp) =>
  `${label} ${t.cpuMicros.toFixed(0)} µs, ${t.voluntary.toFixed(2)} sleeps and ${t.involuntary.toFixed(2)} preemptions`;

/** `API: main thread 412 µs, 1.20 sleeps and 0.40 preemptions; other threads …` for one process, or '' without figures. */
export function threadsLine(name: string, figures: ReturnType<typeof threadsPerOp>): string {
  if (!figures) return '';
  return `${name}: ${part('main thread', figures.main)}; other threads ${part('', figures.others).trimStart()}`;
}

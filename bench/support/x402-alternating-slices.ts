/**
 * Alternating one-second slices for `bench/x402-middleware-bench.ts`: the variants of a comparison (e.g.
 * @x402/express paid and x402Koa paid) take turns, one slice each per round, the order reversed every other
 * round, so that a machine whose speed drifts within a run slows every side alike and the ratio of their sums is
 * the figure. Each variant's server child is asked for its CPU time at every slice boundary; a variant's CPU is
 * everything its server spent over the whole alternated stretch (its own slices and the idle tails after them:
 * a ledger batch flushed just after the slice is still its work). Per slice it also records what may explain a
 * swing: the active server's context switches per request (/proc/<pid>/status: how many requests each wake-up
 * of its event loop found), the load generator's own CPU per request, and the machine's busy and steal shares
 * (/proc/stat). A variant whose requests also run through a process of their own (the gate's origin: `helper`)
 * has that process's CPU over its slices counted per request too, so the machine's cost of the proxied hop shows.
 *
 * Limits: Linux for the /proc figures (they read as NaN elsewhere); the variants must each have their own
 * server; when one variant's payments run out the run stops after that slice (said in the result).
 */
import fs from 'node:fs';
import { readProcStat } from './proc-stat.js';
import type { ServerChild } from './x402-bench-children.js';
import { addResults, drive, type Outcome, type Result } from './x402-bench-load.js';

export interface SliceVariant {
  label: string;
  server: ServerChild;
  op: () => Promise<Outcome>;
  /** Called around each of this variant's slices (e.g. to resume and pause a competing process). */
  around?: { start(): void; stop(): void };
  /** A process each request also runs through (the gate's origin), idle outside this variant's slices. */
  helper?: ServerChild;
}

export interface SliceRecord {
  round: number;
  label: string;
  requests: number;
  seconds: number;
  serverCpuUsPerRequest: number;
  switchesPerRequest: number;
  loadGeneratorCpuUsPerRequest: number;
  machineBusy: number;
  machineSteal: number;
  /** The machine's busy share spent outside the bench's own processes (`options.benchPids` and this one). */
  othersBusy: number;
  /** The variant's `helper` process's CPU over the slice, per request (undefined without one). */
  helperCpuUsPerRequest?: number;
}

export interface AlternatedVariant {
  label: string;
  server: ServerChild;
  result: Result;
  cpuUsPerRequest: number;
  /** Its `helper`'s CPU over its slices, per request (undefined without one). */
  helperCpuUsPerRequest?: number;
  slices: SliceRecord[];
}

/** USER_HZ: /proc/stat counts hundredths of a second. */
const TICKS_PER_SECOND = 100;

const NO_REQUESTS: Result = {
  ok: 0,
  errors: 0,
  seconds: 0,
  latenciesMs: new Float64Array(0),
  exhausted: false,
  firstError: undefined,
};

interface MachineTicks {
  busy: number;
  steal: number;
  total: number;
}

/** The first line of /proc/stat: the machine's busy, steal and total ticks since boot. */
export function readMachineTicks(text?: string): MachineTicks {
  let line = text;
  try {
    line ??= fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  } catch {
    return { busy: NaN, steal: NaN, total: NaN };
  }
  // cpu user nice system idle iowait irq softirq steal (guest time is already inside user and nice)
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const busy = user! + nice! + system! + irq! + softirq!;
  return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
}

/** Voluntary plus involuntary context switches of a process so far (NaN when unreadable). */
function contextSwitches(pid: number | undefined): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const voluntary = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1];
    const involuntary = /^nonvoluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1];
    return Number(voluntary ?? NaN) + Number(involuntary ?? NaN);
  } catch {
    return NaN;
  }
}

/** CPU seconds of the bench's processes: this one (worker threads included) and its children. */
function benchCpuSeconds(pids: number[]): number {
  let sum = readProcStat(process.pid)?.cpuSeconds ?? NaN;
  for (const pid of pids) sum += readProcStat(pid)?.cpuSeconds ?? 0;
  return sum;
}

const cpuUs = async (server: ServerChild) => {
  const s = await server.stats();
  return s.cpuUserUs + s.cpuSystemUs;
};

async function cpuOfAll(variants: SliceVariant[]): Promise<number[]> {
  const out: number[] = [];
  for (const v of variants) out.push(await cpuUs(v.server));
  return out;
}

/** One variant's slice, with its server's and the machine's counters around it. */
async function runSlice(
  variant: SliceVariant,
  round: number,
  options: { concurrency: number; sliceSeconds: number; benchPids?: number[] },
): Promise<{ result: Result; record: Omit<SliceRecord, 'serverCpuUsPerRequest'> }> {
  const pids = options.benchPids ?? [];
  const bench = benchCpuSeconds(pids);
  const machine = readMachineTicks();
  const switches = contextSwitches(variant.server.child.pid);
  const own = process.cpuUsage();
  variant.around?.start();
  const result = await drive(options.concurrency, options.sliceSeconds, variant.op);
  variant.around?.stop();
  const ownUs = process.cpuUsage(own);
  const machineAfter = readMachineTicks();
  const benchSeconds = benchCpuSeconds(pids) - bench;
  const requests = result.ok + result.errors;
  const total = machineAfter.total - machine.total;
  return {
    result,
    record: {
      round,
      label: variant.label,
      requests,
      seconds: result.seconds,
      switchesPerRequest: (contextSwitches(variant.server.child.pid) - switches) / requests,
      loadGeneratorCpuUsPerRequest: (ownUs.user + ownUs.system) / requests,
      machineBusy: (machineAfter.busy - machine.busy) / total,
      machineSteal: (machineAfter.steal - machine.steal) / total,
      othersBusy: (machineAfter.busy - machine.busy - benchSeconds * TICKS_PER_SECOND) / total,
    },
  };
}

/**
 * Runs `rounds` rounds of one `sliceSeconds` slice per variant (reversed order every other round) and sums each
 * variant's slices. `onSlice` sees every slice as it ends (for progress lines).
 */
export async function runAlternated(
  variants: SliceVariant[],
  options: {
    rounds: number;
    sliceSeconds: number;
    concurrency: number;
    benchPids?: number[];
    onSlice?: (s: SliceRecord) => void;
  },
): Promise<{ variants: AlternatedVariant[]; exhausted: boolean }> {
  if (new Set(variants.map((v) => v.server)).size !== variants.length)
    throw new Error('each alternated variant needs its own server');
  const results = new Map<SliceVariant, Result>();
  const cpu = new Map<SliceVariant, number>(variants.map((v) => [v, 0]));
  const slices = new Map<SliceVariant, SliceRecord[]>(variants.map((v) => [v, []]));
  const helperCpu = new Map<SliceVariant, number>(variants.map((v) => [v, 0]));
  let exhausted = false;
  let last = await cpuOfAll(variants);
  for (let round = 0; round < options.rounds && !exhausted; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) {
      const helperBefore = variant.helper ? await cpuUs(variant.helper) : 0;
      const { result, record } = await runSlice(variant, round, options);
      const helperUs = variant.helper ? (await cpuUs(variant.helper)) - helperBefore : undefined;
      const now = await cpuOfAll(variants);
      variants.forEach((v, i) => cpu.set(v, cpu.get(v)! + now[i]! - last[i]!));
      const own = now[variants.indexOf(variant)]! - last[variants.indexOf(variant)]!;
      last = now;
      const full: SliceRecord = { ...record, serverCpuUsPerRequest: own / record.requests };
      if (helperUs !== undefined) {
        full.helperCpuUsPerRequest = helperUs / record.requests;
        helperCpu.set(variant, helperCpu.get(variant)! + helperUs);
      }
      slices.get(variant)!.push(full);
      options.onSlice?.(full);
      results.set(variant, addResults(results.get(variant), result));
      if (result.exhausted) {
        exhausted = true;
        break;
      }
    }
  }
  return {
    exhausted,
    variants: variants.map((v) => {
      const result = results.get(v) ?? NO_REQUESTS;
      const requests = result.ok + result.errors;
      return {
        label: v.label,
        server: v.server,
        result,
        cpuUsPerRequest: cpu.get(v)! / requests,
        ...(v.helper ? { helperCpuUsPerRequest: helperCpu.get(v)! / requests } : {}),
        slices: slices.get(v)!,
      };
    }),
  };
}

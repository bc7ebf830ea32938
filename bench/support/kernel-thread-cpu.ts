/**
 * What the machine's own kernel does beside the service, for `npm run bench`: CPU seconds used by kernel
 * threads, by kind, from /proc (Linux), and the kernel's data-access monitors (DAMON) as configured in sysfs.
 *
 * Why: a virtual machine's kernel may run work of its own in bursts. On the 2-core VM the bench was
 * developed on, a DAMON thread (`kdamond.0`, set up by the host to page out cold file cache) woke every
 * 500 ms and ran ≈ 10 ms across both cores, and the steady phase's slow requests came in bursts at that
 * period. These figures let a run name that cost instead of charging it to the service.
 *
 * Limits: Linux only (empty elsewhere); a kernel thread's name is grouped by its kind ("kworker/1:1H-kblockd"
 * → "kworker", "kdamond.0" → "kdamond").
 */
import fs from 'node:fs';
import path from 'node:path';
import { readProcStat } from './proc-stat.js';
/** task flags: the task is a kernel thread (include/linux/sched.h). */
const PF_KTHREAD = 0x00200000;

/** "kworker/1:1H-kblockd" → "kworker", "kdamond.0" → "kdamond", "ksoftirqd/1" → "ksoftirqd". */
export function kernelThreadKind(comm: string): string {
  return comm.split(/[/.:-]/)[0]!.replace(/\d+$/, '') || comm;
}

/** The kernel threads' pids, read once (they are long-lived), so that each sample reads only theirs. */
export function kernelThreadPids(): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat && (stat.flags & PF_KTHREAD) !== 0) pids.push(Number(entry));
  }
  return pids;
}

/** CPU seconds (user + system) each kind of kernel thread among `pids` has used. */
export function kernelThreadCpu(pids: readonly number[]): Record<string, number> {
  const result: Record<string, number> = {};
  for (const pid of pids) {
    const stat = readProcStat(pid);
    if (!stat) continue; // exited meanwhile
    const kind = kernelThreadKind(stat.comm);
    result[kind] = (result[kind] ?? 0) + stat.cpuSeconds;
  }
  return result;
}

export interface DamonMonitor {
  name: string;
  sampleMs: number;
  aggregateMs: number;
  actions: string[];
}

/** The DAMON monitors running on this machine (sysfs interface), with their sampling period and scheme actions. */
export function runningDamonMonitors(root = '/sys/kernel/mm/damon/admin/kdamonds'): DamonMonitor[] {
  const read = (...parts: string[]) => fs.readFileSync(path.join(root, ...parts), 'utf8').trim();
  const monitors: DamonMonitor[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync(root).filter((e) => /^\d+$/.test(e));
  } catch {
    return monitors;
  }
  for (const id of entries) {
    try {
      if (read(id, 'state') !== 'on') continue;
      const context = path.join(id, 'contexts', '0');
      const intervals = path.join(context, 'monitoring_attrs', 'intervals');
      const schemes = fs.readdirSync(path.join(root, context, 'schemes')).filter((e) => /^\d+$/.test(e));
      monitors.push({
        name: `kdamond.${id}`,
        sampleMs: Number(read(intervals, 'sample_us')) / 1000,
        aggregateMs: Number(read(intervals, 'aggr_us')) / 1000,
        actions: schemes.map((s) => read(context, 'schemes', s, 'action')),
      });
    } catch {
      // a monitor being reconfigured, or an interface this kernel lays out otherwise
    }
  }
  return monitors;
}

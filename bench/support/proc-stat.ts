/**
 * One process's line of /proc/<pid>/stat (Linux), for bench/'s CPU accounting: its name, parent, task flags
 * and CPU seconds. The name is read up to the last ") " so that a name holding spaces or parentheses does
 * not shift the fields.
 *
 * Limits: Linux only; undefined when the process is gone (or on another OS).
 */
import fs from 'node:fs';

/** USER_HZ on Linux: /proc times are in hundredths of a second. */
const TICKS_PER_SECOND = 100;

export interface ProcStat {
  comm: string;
  ppid: number;
  /** Task flags (include/linux/sched.h), e.g. PF_KTHREAD. */
  flags: number;
  /** User + system CPU seconds of the process itself. */
  cpuSeconds: number;
  /** Of which system (kernel) CPU seconds: system calls, wake-ups, page faults. */
  systemSeconds: number;
  /** User + system CPU seconds of its children that exited and were waited for. */
  childrenCpuSeconds: number;
}

/** A process's line, or (with `tid`) one of its threads' (`/proc/<pid>/task/<tid>/stat`: that thread's CPU alone). */
export function readProcStat(pid: number | undefined, tid?: number): ProcStat | undefined {
  if (pid === undefined) return undefined;
  let line: string;
  try {
    line = fs.readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = line.lastIndexOf(') ');
  // After "pid (comm) ": state(0) ppid(1) … flags(6) … utime(11) stime(12) cutime(13) cstime(14).
  const fields = line.slice(close + 2).split(' ');
  return {
    comm: line.slice(line.indexOf('(') + 1, close),
    ppid: Number(fields[1]),
    flags: Number(fields[6]),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND,
    systemSeconds: Number(fields[12]) / TICKS_PER_SECOND,
    childrenCpuSeconds: (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND,
  };
}

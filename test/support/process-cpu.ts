/**
 * The CPU a test worker spent on a file: its own and its reaped children's (signers, APIs, CLI runs, browsers,
 * embedded PostgreSQL servers it started and stopped), read from /proc/self/stat in ms. For
 * TREASURY_TEST_FILE_TIMES, so that a slow file is told apart from one that waits: on a machine the suites keep
 * busy, the wall time of the run follows the CPU of its files, not their waits.
 *
 * Known limits: Linux only (undefined elsewhere); a child still running when the file ends, or one whose parent
 * exits before it does, is not counted; the run's shared PostgreSQL server (the main process's) is nobody's file.
 */
import { readFileSync } from 'node:fs';

/** /proc's clock ticks a second (USER_HZ, 100 on every Linux architecture Node runs on). */
const TICKS_PER_SECOND = 100;

export function cpuWithChildrenMs(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (in parentheses, which may hold spaces): state is the 3rd field, so
  // utime, stime, cutime and cstime (14th–17th) are the 12th–15th after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
}

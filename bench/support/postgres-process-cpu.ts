/**
 * CPU seconds a PostgreSQL server's processes have used, by role, from /proc (Linux): the postmaster and
 * its children (client backends, WAL writer, checkpointer, background writer, autovacuum, …). Children
 * that exited (autovacuum workers, closed connections) are counted through the postmaster's cutime and
 * cstime, under "exited". For bench/ to split "PostgreSQL and the rest" of a phase's CPU.
 *
 * Limits: Linux only (empty elsewhere); a child that exits between two samples moves from its role to
 * "exited", so a difference of two samples is right in total and approximate per role.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readProcStat } from './proc-stat.js';

/**
 * "postgres: walwriter" → "walwriter"; a client backend ("postgres: user db 127.0.0.1(5432) idle") → "backends", or
 * "backends db" when `byDatabase`.
 */
function roleOf(pid: number, byDatabase: boolean): string {
  try {
    const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
    const role = title.replace(/^postgres:\s*/, '');
    if (/\(\d+\)|\[local\]/.test(role)) return byDatabase ? `backends ${role.split(/\s+/)[1] ?? ''}` : 'backends';
    if (role.startsWith('autovacuum worker')) return 'autovacuum';
    return role.split(/\s+/).slice(0, 2).join(' ') || 'other';
  } catch {
    return 'other';
  }
}

/** CPU seconds by role (`byDatabase`: client backends by their database, e.g. "backends treasury_signer"). */
export function postgresProcessCpu(dataDir: string, byDatabase = false): Record<string, number> {
  const result: Record<string, number> = {};
  let postmaster: number;
  try {
    postmaster = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return result;
  }
  const master = readProcStat(postmaster);
  if (!master) return result;
  result.postmaster = master.cpuSeconds;
  result.exited = master.childrenCpuSeconds;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (stat?.ppid !== postmaster) continue;
    const role = roleOf(Number(entry), byDatabase);
    result[role] = (result[role] ?? 0) + stat.cpuSeconds;
  }
  return result;
}

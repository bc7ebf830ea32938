/**
 * Where `npm run bench`'s CPU goes: samples of the API's, the signer's, the load generator's and the machine's CPU
 * seconds, PostgreSQL's processes by role (./postgres-process-cpu.ts) and the kernel's own threads by kind
 * (./kernel-thread-cpu.ts), read from /proc; and the pure arithmetic that turns two samples into a phase's CPU a
 * payment — by part (as ./pay-ratio-bound.ts sets it beside the floor's), beyond the services, or PostgreSQL's
 * share by role.
 *
 * Limits: Linux only (elsewhere every figure reads NaN); a process's CPU on a VM counts some of the time the
 * hypervisor took (so "the rest", a difference, can come out negative when much was stolen).
 */
import fs from 'node:fs';
import { readProcStat } from './proc-stat.js';
import { kernelThreadCpu, kernelThreadPids } from './kernel-thread-cpu.js';
import { postgresProcessCpu } from './postgres-process-cpu.js';
import type { PartsMicros } from './pay-ratio-bound.js';

/** CPU seconds (user + system) a process has used, from /proc (Linux); NaN elsewhere. */
export function processCpuSeconds(pid: number | undefined): number {
  return readProcStat(pid)?.cpuSeconds ?? NaN;
}

/**
 * CPU seconds from /proc/stat's first line (all cores): `busy` is everything but idle, iowait and steal;
 * `steal` is time the hypervisor ran something else while this machine's vCPUs wanted to run; `iowait` is
 * idle time while a process waited on the disk (PostgreSQL's WAL flushes, for one).
 */
export function machineSeconds(): { busy: number; steal: number; iowait: number } {
  try {
    const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const steal = cpu[7] ?? 0;
    // guest and guest_nice (8, 9) are already counted in user and nice.
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - idle - steal) / 100, steal: steal / 100, iowait: (cpu[4] ?? 0) / 100 };
  } catch {
    return { busy: NaN, steal: NaN, iowait: NaN };
  }
}

/**
 * The kernel's count of file pages read again after being evicted from the page cache, and of major page
 * faults (a mapped page read from disk): a service whose working set the host reclaims reads it back from
 * disk while requests wait.
 */
export function pageCacheCounters(): { refaults: number; majorFaults: number } {
  try {
    const vmstat = fs.readFileSync('/proc/vmstat', 'utf8');
    const count = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(vmstat)?.[1] ?? NaN);
    return { refaults: count('workingset_refault_file'), majorFaults: count('pgmajfault') };
  } catch {
    return { refaults: NaN, majorFaults: NaN };
  }
}

export interface CpuSample {
  api: number;
  signer: number;
  self: number;
  machine: number;
  steal: number;
  iowait: number;
  /** PostgreSQL's processes by role (./postgres-process-cpu.ts). */
  pg: Record<string, number>;
  /** The machine's kernel threads by kind (./kernel-thread-cpu.ts). */
  kernel: Record<string, number>;
}

/**
 * A sampler of the bench's CPU: the API's and the signer's processes, the load generator (this process), the
 * machine, PostgreSQL's processes under `pgDataDir`, and the kernel threads running when it is made.
 */
export function cpuSampler(o: { apiPid: number | undefined; signerPid: number | undefined; pgDataDir: string }) {
  const kernelThreads = kernelThreadPids();
  return (): CpuSample => ({
    kernel: kernelThreadCpu(kernelThreads),
    api: processCpuSeconds(o.apiPid),
    signer: processCpuSeconds(o.signerPid),
    self: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    ...(({ busy, steal, iowait }) => ({ machine: busy, steal, iowait }))(machineSeconds()),
    pg: postgresProcessCpu(o.pgDataDir),
  });
}

/** The machine's CPU seconds between two samples beyond the API, the signer and the load generator: PostgreSQL and the rest. */
export function beyondServices(before: CpuSample, after: CpuSample): number {
  return (
    after.machine -
    before.machine -
    (after.api - before.api) -
    (after.signer - before.signer) -
    (after.self - before.self)
  );
}

/** The machine's kernel threads' CPU seconds between two samples, all kinds together. */
export function kernelThreadSeconds(before: CpuSample, after: CpuSample): number {
  return Object.keys(after.kernel).reduce(
    (sum, kind) => sum + (after.kernel[kind] ?? 0) - (before.kernel[kind] ?? 0),
    0,
  );
}

/** A phase's CPU per pay by part, µs, as ./pay-ratio-bound.ts sets it beside the floor's. */
export function partsPerPay(before: CpuSample, after: CpuSample, ops: number): PartsMicros {
  const per = (seconds: number) => (seconds / ops) * 1e6;
  const pg = Object.keys(after.pg).reduce((t, role) => t + (after.pg[role] ?? 0) - (before.pg[role] ?? 0), 0);
  return {
    front: per(after.api - before.api),
    hop: per(after.signer - before.signer),
    postgres: per(pg),
    load: per(after.self - before.self),
    machine: per(after.machine - before.machine),
  };
}

/** PostgreSQL's CPU per pay between two samples, by role (largest first), and what is left of the machine's. */
export function postgresShare(before: CpuSample, after: CpuSample, ops: number): string {
  const perPay = (seconds: number) => (seconds / ops) * 1e6;
  const roles = Object.keys(after.pg).map(
    (role) => [role, perPay((after.pg[role] ?? 0) - (before.pg[role] ?? 0))] as const,
  );
  const pgTotal = roles.reduce((sum, [, v]) => sum + v, 0);
  const rest = perPay(beyondServices(before, after)) - pgTotal;
  const shown = roles
    .filter(([, v]) => v >= 5)
    .sort((a, b) => b[1] - a[1])
    .map(([role, v]) => `${role} ${v.toFixed(0)}`)
    .join(', ');
  return `PostgreSQL ${pgTotal.toFixed(0)} (${shown}), the rest ${rest.toFixed(0)} (the kernel's own threads ${perPay(kernelThreadSeconds(before, after)).toFixed(0)})`;
}

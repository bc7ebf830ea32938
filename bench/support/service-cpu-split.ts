/**
 * The CPU a payment of one phase, by process, with the kernel's share of the API's and the signer's: for
 * ./steady-tail.ts, which sets a closed-loop phase (the services never idle) beside (c) (each payment wakes them),
 * so that what a payment costs more at a steady rate is split into what the services' own code runs and what the
 * kernel runs for them (system calls, wake-ups, page faults).
 *
 * Limits: Linux only (NaN elsewhere); /proc counts in ticks of 10 ms, so a phase needs thousands of payments for
 * a figure to the µs; a process's CPU on a VM includes some of the time the hypervisor took.
 */
import { readProcStat } from './proc-stat.js';
import { machineSeconds } from './pay-bench-cpu.js';
import { postgresProcessCpu } from './postgres-process-cpu.js';

interface Sample {
  api: { cpu: number; system: number };
  signer: { cpu: number; system: number };
  postgres: number;
  load: number;
  machine: number;
}

/** The CPU a payment over a phase, µs. */
export interface CpuSplit {
  api: number;
  apiKernel: number;
  signer: number;
  signerKernel: number;
  postgres: number;
  load: number;
  machine: number;
}

function processSample(pid: number | undefined): { cpu: number; system: number } {
  const stat = readProcStat(pid);
  return stat ? { cpu: stat.cpuSeconds, system: stat.systemSeconds } : { cpu: NaN, system: NaN };
}

/** Reads the services' CPU now; call the result at the phase's end with its payments for the split. */
export function startCpuSplit(o: {
  apiPid: number | undefined;
  signerPid: number | undefined;
  pgDataDir: string;
}): (payments: number) => CpuSplit {
  const sample = (): Sample => {
    const usage = process.cpuUsage();
    return {
      api: processSample(o.apiPid),
      signer: processSample(o.signerPid),
      postgres: Object.values(postgresProcessCpu(o.pgDataDir)).reduce((t, v) => t + v, 0),
      load: (usage.user + usage.system) / 1e6,
      machine: machineSeconds().busy,
    };
  };
  const before = sample();
  return (payments) => {
    const after = sample();
    const per = (seconds: number) => Math.round((seconds / payments) * 1e6);
    return {
      api: per(after.api.cpu - before.api.cpu),
      apiKernel: per(after.api.system - before.api.system),
      signer: per(after.signer.cpu - before.signer.cpu),
      signerKernel: per(after.signer.system - before.signer.system),
      postgres: per(after.postgres - before.postgres),
      load: per(after.load - before.load),
      machine: per(after.machine - before.machine),
    };
  };
}

/** "API 338 (kernel 60), signer …": one phase's split as a report line's tail. */
export function describeCpuSplit(s: CpuSplit): string {
  return (
    `API ${s.api} (kernel ${s.apiKernel}), signer ${s.signer} (kernel ${s.signerKernel}), ` +
    `PostgreSQL ${s.postgres}, load generator ${s.load}; the machine ${s.machine}`
  );
}

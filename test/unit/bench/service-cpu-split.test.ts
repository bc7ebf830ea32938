/**
 * The steady-tail bench's CPU split (bench/support/service-cpu-split.ts): a process's CPU over a phase, divided
 * by the phase's payments, with the kernel's share apart; a process it cannot read is NaN, not zero.
 */
import assert from 'node:assert/strict';
import { describeCpuSplit, startCpuSplit } from '../../../bench/support/service-cpu-split.js';

/** Keeps this thread on the CPU for `ms` of its own CPU time (not wall time: a busy machine only stretches it). */
function burnCpu(ms: number): void {
  const start = process.cpuUsage();
  let x = 0;
  for (;;) {
    for (let i = 0; i < 10_000; i++) x = (x * 31 + i) % 1_000_003;
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) break;
  }
  assert.ok(x >= 0);
}

describe('bench CPU split by process', () => {
  it("divides a process's CPU over the phase's payments, the load generator's too, and reads NaN for a missing one", function () {
    if (process.platform !== 'linux') this.skip();
    const split = startCpuSplit({ apiPid: process.pid, signerPid: 2 ** 22 + 1, pgDataDir: '/nonexistent' });
    burnCpu(300);
    const s = split(1000);
    // 300 ms over 1,000 payments is 300 µs each; /proc counts in 10-ms ticks (10 µs a payment here).
    assert.ok(s.api >= 280 && s.api < 600, `api ${s.api}`);
    assert.ok(Math.abs(s.load - s.api) <= 30, `load ${s.load} beside api ${s.api}: the same process`);
    assert.ok(s.apiKernel >= 0 && s.apiKernel <= s.api, `kernel ${s.apiKernel}`);
    assert.ok(Number.isNaN(s.signer) && Number.isNaN(s.signerKernel), 'a process that is gone is not read as idle');
    assert.equal(s.postgres, 0, 'no server in the directory: nothing counted');
    assert.ok(s.machine >= s.api - 30, `machine ${s.machine}`);
    assert.match(
      describeCpuSplit(s),
      /^API \d+ \(kernel \d+\), signer NaN \(kernel NaN\), PostgreSQL 0, load generator \d+; the machine \d+$/,
    );
  });
});

/**
 * The bench's reader of /proc/<pid>/stat: the fields its CPU accounting depends on, for this very process.
 */
import assert from 'node:assert/strict';
import { readProcStat } from '../../../bench/support/proc-stat.js';

describe('bench /proc/<pid>/stat reader', () => {
  it("reads this process's name, parent and CPU seconds, and nothing for a process that is gone", function () {
    if (process.platform !== 'linux') this.skip();
    const stat = readProcStat(process.pid);
    assert.ok(stat);
    assert.equal(stat.ppid, process.ppid);
    assert.equal(stat.flags & 0x00200000, 0, 'a user process is not a kernel thread');
    const used = process.cpuUsage();
    assert.ok(
      stat.cpuSeconds > 0 && stat.cpuSeconds <= (used.user + used.system) / 1e6 + 0.02,
      `cpu ${stat.cpuSeconds}`,
    );
    assert.ok(stat.comm.length > 0);
    assert.equal(readProcStat(2 ** 22 + 1), undefined);
    assert.equal(readProcStat(undefined), undefined);
  });
});

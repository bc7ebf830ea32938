/**
 * The bench's view of the machine's own kernel: kernel threads grouped by kind, their CPU read from /proc,
 * and DAMON monitors read from a sysfs tree (here one laid out in a temporary directory).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  kernelThreadCpu,
  kernelThreadKind,
  kernelThreadPids,
  runningDamonMonitors,
} from '../../../bench/support/kernel-thread-cpu.js';

/** Kernel thread names as /proc shows them, one of each kind the bench groups. */
const THREAD_NAMES = ['kworker/1:1H-kblockd', 'kdamond.0', 'ksoftirqd/1', 'kswapd0', 'rcu_preempt'];

describe('bench kernel-thread CPU', () => {
  it('groups kernel threads by kind', () => {
    assert.deepEqual(THREAD_NAMES.map(kernelThreadKind), ['kworker', 'kdamond', 'ksoftirqd', 'kswapd', 'rcu_preempt']);
  });

  it('finds kernel threads and not user processes, and reads their CPU by kind', function () {
    if (process.platform !== 'linux') this.skip();
    const pids = kernelThreadPids();
    assert.ok(pids.length > 0, 'a Linux machine runs kernel threads (kthreadd at least)');
    assert.ok(!pids.includes(process.pid));
    const cpu = kernelThreadCpu(pids);
    assert.ok(Object.keys(cpu).length > 0);
    for (const [kind, seconds] of Object.entries(cpu))
      assert.ok(Number.isFinite(seconds) && seconds >= 0, `${kind}: ${seconds}`);
  });

  it('lists the DAMON monitors that are on, with their sampling period and scheme actions', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-damon-'));
    try {
      const write = (rel: string, value: string) => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), `${value}\n`);
      };
      write('nr_kdamonds', '2');
      write('0/state', 'on');
      write('0/contexts/0/monitoring_attrs/intervals/sample_us', '500000');
      write('0/contexts/0/monitoring_attrs/intervals/aggr_us', '5000000');
      write('0/contexts/0/schemes/0/action', 'pageout');
      write('1/state', 'off');
      write('1/contexts/0/monitoring_attrs/intervals/sample_us', '5000');
      assert.deepEqual(runningDamonMonitors(root), [
        { name: 'kdamond.0', sampleMs: 500, aggregateMs: 5000, actions: ['pageout'] },
      ]);
      assert.deepEqual(runningDamonMonitors(path.join(root, 'absent')), []);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

/**
 * The bench's per-thread accounting: the switch counters read from a /proc status text, a process's main thread
 * apart from its other threads (read from a quiet child process that starts one sleeping worker), and the figures a
 * payment between two samples.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import {
  parseSwitchCounts,
  readProcessThreads,
  threadsLine,
  threadsPerOp,
} from '../../../bench/support/thread-switches.js';

const STATUS = [
  'Name:\tnode',
  'State:\tS (sleeping)',
  'Threads:\t11',
  'voluntary_ctxt_switches:\t4711',
  'nonvoluntary_ctxt_switches:\t42',
  '',
].join('\n');

/** Says `up`; on a line, runs a worker that sleeps ten times, says `slept`, and waits (the worker with it) to be killed. */
const CHILD = `
const { Worker } = require('node:worker_threads');
process.stdout.write('up\\n');
process.stdin.once('data', () => {
  // After its tenth wake-up it stays (a timer it never reaches), so that it is still a thread when it is counted.
  const sleeper = 'let n = 0; const t = setInterval(() => { if (++n === 10) { clearInterval(t); setTimeout(() => {}, 600000); require("node:worker_threads").parentPort.postMessage(1); } }, 2);';
  const worker = new Worker(sleeper, { eval: true });
  worker.once('message', () => process.stdout.write('slept\\n'));
});
`;

describe('bench thread switches', () => {
  it('reads both switch counters of a status text, NaN for a missing one', () => {
    assert.deepEqual(parseSwitchCounts(STATUS), { voluntary: 4711, involuntary: 42 });
    const last = parseSwitchCounts('Name:\tnode\nvoluntary_ctxt_switches:\t7');
    assert.equal(last.voluntary, 7);
    assert.ok(Number.isNaN(last.involuntary));
  });

  it('puts the main thread apart from the others, and counts a thread that slept', async function () {
    if (process.platform !== 'linux') this.skip();
    // A quiet process of its own (this one's threads come and go with other suites): on a line from stdin it starts
    // a worker that sleeps on a 2-ms timer ten times — each wake-up a voluntary switch of a thread not the main one.
    const child = spawn(process.execPath, ['-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = readline.createInterface({ input: child.stdout! });
      const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
      assert.equal(await next(), 'up');
      const before = readProcessThreads(child.pid);
      assert.ok(before);
      assert.ok(before.otherThreads >= 1, 'Node runs threads besides the main one');
      child.stdin!.write('go\n');
      assert.equal(await next(), 'slept');
      const during = readProcessThreads(child.pid);
      assert.ok(during);
      assert.equal(during.otherThreads, before.otherThreads + 1, 'the worker is one more thread');
      assert.ok(during.others.voluntary - before.others.voluntary >= 10, 'its sleeps are counted among the others');
    } finally {
      child.kill();
    }
    assert.equal(readProcessThreads(2 ** 30), undefined, 'a process that does not exist has no figures');
  });

  it('gives the figures a payment between two samples, and prints them', () => {
    const at = (voluntary: number, involuntary: number, cpuSeconds: number) => ({ voluntary, involuntary, cpuSeconds });
    const before = { main: at(100, 10, 1), others: at(400, 40, 2), otherThreads: 10 };
    const after = { main: at(2100, 510, 1.4), others: at(4400, 840, 2.9), otherThreads: 10 };
    const per = threadsPerOp(before, after, 1000);
    assert.ok(per);
    assert.deepEqual([per.main.voluntary, per.main.involuntary, Math.round(per.main.cpuMicros)], [2, 0.5, 400]);
    assert.deepEqual([per.others.voluntary, per.others.involuntary, Math.round(per.others.cpuMicros)], [4, 0.8, 900]);
    assert.equal(
      threadsLine('signer', per),
      'signer: main thread 400 µs, 2.00 sleeps and 0.50 preemptions; other threads 900 µs, 4.00 sleeps and 0.80 preemptions',
    );
    assert.equal(threadsPerOp(undefined, after, 1000), undefined);
    assert.equal(threadsPerOp(before, after, 0), undefined);
    assert.equal(threadsLine('API', undefined), '');
  });
});

/**
 * The closeable runner (base/closeables.ts), the background loop (base/repeating-task.ts) and the signal
 * handling (base/shutdown-signals.ts): order, bounds, every step attempted, the report and the exit code.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeable, closeInOrder, type CloseStep } from '../../../base/closeables.js';
import { startRepeatingTask } from '../../../base/repeating-task.js';
import { FORCED_EXIT_CODE, installShutdown, watchParent } from '../../../base/shutdown-signals.js';
import { startSentinel } from '../../support/timer-order.js';

describe('closeInOrder', () => {
  it('closes in the given order, one after another, and reports each step', async () => {
    const events: string[] = [];
    const step = (name: string, ms: number) =>
      closeable(name, async () => {
        events.push(`${name}:start`);
        await sleep(ms);
        events.push(`${name}:end`);
      });
    const seen: CloseStep[] = [];
    const report = await closeInOrder([step('a', 20), step('b', 1), step('c', 5)], (s) => seen.push(s));
    assert.deepEqual(events, ['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
    assert.equal(report.ok, true);
    assert.deepEqual(report.failed, []);
    assert.deepEqual(seen, report.steps);
    assert.deepEqual(
      report.steps.map((s) => [s.name, s.outcome]),
      [
        ['a', 'closed'],
        ['b', 'closed'],
        ['c', 'closed'],
      ],
    );
    assert.ok(report.steps[0]!.duration_ms >= 15);
  });

  it('bounds a hanging step by its timeout and goes on', async () => {
    const closed: string[] = [];
    // Bounded by its own 50 ms timer: the report comes before a 1 s timer started with it has fired, an order
    // that holds however late a loaded machine runs both (test/support/timer-order.ts); a runner that waited
    // for the step, or bounded it by a longer timer, loses that race.
    const sentinel = startSentinel(1_000);
    const report = await closeInOrder([
      closeable('hangs', () => new Promise<void>(() => undefined), 50),
      closeable('after', () => void closed.push('after')),
    ]).finally(() => sentinel.clear());
    assert.equal(sentinel.fired, false, 'the report came after a 1 s timer: the step was not bounded by its 50 ms');
    assert.deepEqual(closed, ['after']);
    assert.equal(report.ok, false);
    assert.deepEqual(report.failed, ['hangs']);
    assert.equal(report.steps[0]!.outcome, 'timed_out');
    assert.ok(report.steps[0]!.duration_ms >= 45);
  });

  it('a failing step — rejected or thrown synchronously — does not stop the later ones', async () => {
    const closed: string[] = [];
    const report = await closeInOrder([
      closeable('rejects', async () => {
        throw new Error('pool gone');
      }),
      closeable('throws', () => {
        throw new Error('sync');
      }),
      closeable('last', () => void closed.push('last')),
    ]);
    assert.deepEqual(closed, ['last']);
    assert.deepEqual(report.failed, ['rejects', 'throws']);
    assert.deepEqual(
      report.steps.map((s) => s.error),
      ['pool gone', 'sync', undefined],
    );
  });

  it('a throwing step logger does not stop the shutdown', async () => {
    const report = await closeInOrder([closeable('a', () => undefined), closeable('b', () => undefined)], () => {
      throw new Error('log down');
    });
    assert.equal(report.steps.length, 2);
  });
});

describe('startRepeatingTask', () => {
  it('runs at start and then every interval, never overlapping; close stops it and waits for the run in flight', async () => {
    let runs = 0;
    let active = 0;
    let overlapped = false;
    let finishedRuns = 0;
    const task = startRepeatingTask({
      name: 'sweeper',
      everyMs: 5,
      run: async () => {
        runs++;
        active++;
        if (active > 1) overlapped = true;
        await sleep(20);
        active--;
        finishedRuns++;
      },
    });
    // A second run comes after the first finished and the interval passed, however long a busy machine makes
    // that take (a task that never ran again would hold this test until its time-out).
    while (runs < 2) await sleep(1);
    while (!task.running) await sleep(1);
    await task.close();
    assert.equal(task.running, false);
    assert.equal(finishedRuns, runs, 'the run in flight finished before close resolved');
    const after = runs;
    await sleep(40);
    assert.equal(runs, after, 'no run after close');
    assert.equal(overlapped, false);
  });

  it('a rejected run does not end the loop', async () => {
    let runs = 0;
    const task = startRepeatingTask({
      name: 'flaky',
      everyMs: 2,
      run: () => Promise.reject(new Error(`run ${++runs}`)),
    });
    await sleep(30);
    await task.close();
    assert.ok(runs >= 2);
  });

  it('runAtStart false waits for the first interval', async () => {
    let runs = 0;
    const task = startRepeatingTask({ name: 'later', everyMs: 1_000, runAtStart: false, run: async () => void runs++ });
    await sleep(20);
    await task.close();
    assert.equal(runs, 0);
  });
});

describe('installShutdown', () => {
  function harness(steps: Parameters<typeof closeInOrder>[0]) {
    const signals = new EventEmitter();
    const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
    const exits: number[] = [];
    const log = {
      info: (fields: object, msg: string) =>
        lines.push({ level: 'info', fields: fields as Record<string, unknown>, msg }),
      error: (fields: object, msg: string) =>
        lines.push({ level: 'error', fields: fields as Record<string, unknown>, msg }),
    };
    const shutdown = installShutdown({
      closeables: () => steps,
      log,
      signals,
      exit: (code) => void exits.push(code),
      label: 'test',
    });
    return { signals, lines, exits, shutdown };
  }

  it('SIGTERM closes every step in order, logs each, exits 0', async () => {
    const h = harness([closeable('a', () => undefined), closeable('b', () => undefined)]);
    h.signals.emit('SIGTERM');
    await h.shutdown.finished;
    await sleep(0);
    assert.deepEqual(h.exits, [0]);
    assert.deepEqual(
      h.lines.map((l) => l.msg),
      ['test shutting down', 'shutdown step', 'shutdown step', 'test stopped'],
    );
    assert.deepEqual(
      h.lines.filter((l) => l.msg === 'shutdown step').map((l) => [l.fields.step, l.fields.outcome]),
      [
        ['a', 'closed'],
        ['b', 'closed'],
      ],
    );
  });

  it('SIGINT too; a failed step means exit 1 with the failures named at the end', async () => {
    const h = harness([closeable('bad', () => Promise.reject(new Error('nope'))), closeable('good', () => undefined)]);
    h.signals.emit('SIGINT');
    const report = await h.shutdown.finished;
    await sleep(0);
    assert.deepEqual(report?.failed, ['bad']);
    assert.deepEqual(h.exits, [1]);
    const last = h.lines.at(-1)!;
    assert.equal(last.level, 'error');
    assert.deepEqual(last.fields.failed, ['bad']);
  });

  it('a second signal during the shutdown forces the exit at once', async () => {
    const h = harness([closeable('slow', () => sleep(200), 1_000)]);
    h.signals.emit('SIGTERM');
    await sleep(10);
    h.signals.emit('SIGTERM');
    assert.deepEqual(h.exits, [FORCED_EXIT_CODE]);
    await h.shutdown.finished;
  });
});

describe('watchParent', () => {
  it('triggers the shutdown once when the parent pid changes, and not while it stays; its closeable stops the watch', async () => {
    let ppid = 100;
    const reasons: string[] = [];
    const watch = watchParent({ trigger: (reason) => reasons.push(reason) }, { everyMs: 5, ppid: () => ppid });
    await sleep(30);
    assert.deepEqual(reasons, []);
    ppid = 1;
    await sleep(30);
    assert.deepEqual(reasons, ['parent exited']);
    const report = await closeInOrder([watch]);
    assert.equal(report.ok, true);
    assert.equal(watch.name, 'parent_watch');
  });

  it('once closed, a parent that goes away triggers nothing', async () => {
    let ppid = 100;
    const reasons: string[] = [];
    const watch = watchParent({ trigger: (reason) => reasons.push(reason) }, { everyMs: 5, ppid: () => ppid });
    await closeInOrder([watch]);
    ppid = 1;
    await sleep(30);
    assert.deepEqual(reasons, []);
  });
});

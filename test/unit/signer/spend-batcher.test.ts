/**
 * The signer's group commit (signer/owner-policy/spend-batcher.ts): requests of one turn of the event loop start
 * together; requests that arrive while batches run share the next batch; patient requests (whose signature is
 * still being made) gather until one of them is done, an impatient one arrives, the batch is full or the gathering
 * time ran out; no more than `maxInFlight` batches run at once nor more than `maxBatch` requests in one; each
 * request gets its own outcome, in order; a failed batch fails each of its requests and the next batch still runs.
 */
import assert from 'node:assert/strict';
import { SpendBatcher } from '../../../signer/owner-policy/spend-batcher.js';

/** A batch runner whose batches finish when told, recording what each held. */
function heldRunner() {
  const batches: number[][] = [];
  const release: Array<(fail?: boolean) => void> = [];
  const run = (entries: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push(entries);
      release.push((fail) => (fail ? reject(new Error('store down')) : resolve(entries.map((e) => `ok ${e}`))));
    });
  return { batches, release, run };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('SpendBatcher (group commit of spends)', () => {
  it('starts the requests of one turn together, then groups those that waited, within the bounds', async () => {
    const { batches, release, run } = heldRunner();
    const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 3 });
    const outcomes = [1, 2].map((n) => batcher.submit(n));
    assert.deepEqual(batches, [], 'nothing starts before the turn ends');
    await tick();
    assert.deepEqual(batches, [[1, 2]], 'the requests of one turn share a batch');
    outcomes.push(...[3, 4, 5, 6, 7].map((n) => batcher.submit(n)));
    await tick();
    assert.deepEqual(batches, [[1, 2]], 'one batch in flight');
    release.shift()!();
    await tick();
    assert.deepEqual(
      batches,
      [
        [1, 2],
        [3, 4, 5],
      ],
      'the next batch takes at most maxBatch of those waiting',
    );
    release.shift()!();
    await tick();
    release.shift()!();
    assert.deepEqual(await Promise.all(outcomes), ['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5', 'ok 6', 'ok 7']);
    assert.deepEqual(batches, [
      [1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
  });

  it('starts a request of a later turn on its own once nothing runs', async () => {
    const { batches, release, run } = heldRunner();
    const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10 });
    const first = batcher.submit(1);
    await tick();
    release.shift()!();
    assert.equal(await first, 'ok 1');
    const later = batcher.submit(2);
    await tick();
    assert.deepEqual(batches, [[1], [2]]);
    release.shift()!();
    assert.equal(await later, 'ok 2');
  });

  it('fails every request of a failed batch, and the next batch still runs', async () => {
    const { batches, release, run } = heldRunner();
    const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10 });
    const first = batcher.submit(1);
    await tick();
    const second = [2, 3].map((n) => batcher.submit(n));
    release.shift()!(true);
    await assert.rejects(first, /store down/);
    await tick();
    assert.deepEqual(batches, [[1], [2, 3]]);
    release.shift()!();
    assert.deepEqual(await Promise.all(second), ['ok 2', 'ok 3']);
  });

  it('keeps up to maxInFlight batches running at once', async () => {
    const { batches, release, run } = heldRunner();
    const batcher = new SpendBatcher(run, { maxInFlight: 2, maxBatch: 1 });
    const all = [1, 2, 3].map((n) => batcher.submit(n));
    await tick();
    assert.deepEqual(batches, [[1], [2]], 'two batches run at once; the third request waits');
    release.shift()!();
    await tick();
    assert.deepEqual(batches, [[1], [2], [3]]);
    release.forEach((r) => r());
    assert.equal((await Promise.all(all)).length, 3);
  });

  describe('patient requests', () => {
    /** A promise and what settles it. */
    const deferred = () => {
      let settle!: () => void;
      const promise = new Promise<void>((r) => (settle = r));
      return { promise, settle };
    };
    const patient = (batcher: SpendBatcher<number, string>, n: number, running: Promise<unknown>) => {
      const outcome = batcher.submit(n);
      batcher.waitFor(n, running);
      return outcome;
    };

    it('gather until the first of their signatures is made', async () => {
      const { batches, release, run } = heldRunner();
      const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10, gatherMs: 10_000 });
      const [one, two] = [deferred(), deferred()];
      const outcomes = [patient(batcher, 1, one.promise)];
      await tick();
      outcomes.push(patient(batcher, 2, two.promise));
      await tick();
      assert.deepEqual(batches, [], 'both wait for their signatures');
      two.settle();
      await tick();
      await tick();
      assert.deepEqual(batches, [[1, 2]], 'the batch starts once a signature is made');
      release.shift()!();
      assert.deepEqual(await Promise.all(outcomes), ['ok 1', 'ok 2']);
    });

    it('start at once beside an impatient request, or when the batch is full', async () => {
      const { batches, release, run } = heldRunner();
      const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 3, gatherMs: 10_000 });
      const never = new Promise(() => undefined);
      const outcomes = [patient(batcher, 1, never)];
      await tick();
      outcomes.push(batcher.submit(2));
      await tick();
      assert.deepEqual(batches, [[1, 2]], 'an impatient request does not wait');
      outcomes.push(patient(batcher, 3, never), patient(batcher, 4, never), patient(batcher, 5, never));
      release.shift()!();
      await tick();
      await tick();
      assert.deepEqual(
        batches,
        [
          [1, 2],
          [3, 4, 5],
        ],
        'a full batch does not wait',
      );
      release.shift()!();
      assert.equal((await Promise.all(outcomes)).length, 5);
    });

    it('gather no longer than gatherMs', async () => {
      const { batches, release, run } = heldRunner();
      const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10, gatherMs: 30 });
      const outcome = patient(batcher, 1, new Promise(() => undefined));
      await tick();
      assert.deepEqual(batches, []);
      await new Promise((r) => setTimeout(r, 60));
      await tick();
      assert.deepEqual(batches, [[1]], 'started once the gathering time ran out');
      release.shift()!();
      assert.equal(await outcome, 'ok 1');
    });

    it('stop gathering when the timer says so, whatever the clock reads', async () => {
      const { batches, release, run } = heldRunner();
      const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10, gatherMs: 30 });
      // A timer may fire when a clock read at its start says less time passed: the timer decides.
      const now = performance.now;
      performance.now = () => 0;
      try {
        const outcome = patient(batcher, 1, new Promise(() => undefined));
        await new Promise((r) => setTimeout(r, 60));
        await tick();
        assert.deepEqual(batches, [[1]]);
        release.shift()!();
        assert.equal(await outcome, 'ok 1');
      } finally {
        performance.now = now;
      }
    });

    it('do not wait when gatherMs is 0', async () => {
      const { batches, release, run } = heldRunner();
      const batcher = new SpendBatcher(run, { maxInFlight: 1, maxBatch: 10, gatherMs: 0 });
      const outcome = patient(batcher, 1, new Promise(() => undefined));
      await tick();
      assert.deepEqual(batches, [[1]]);
      release.shift()!();
      assert.equal(await outcome, 'ok 1');
    });
  });
});

/**
 * The fair queue of the wallet audit's full verifications (base/fair-queue.ts): one job at a time;
 * tenants served round-robin, so one tenant's backlog delays another's first job by the running job at most;
 * a job that waited past the bound never runs and its caller is told so; a failing job fails its caller only.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FairQueue } from '../../../base/fair-queue.js';

/** A job the test finishes by hand, recording when it started. */
function manualJob(name: string, started: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      started.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

/** Lets every pending promise continuation run. */
const settle = () => sleep(0);

describe('fair queue (one job at a time, round-robin per tenant)', () => {
  it("serves tenants in turn: B's and C's first jobs wait for A's running one only, not A's whole backlog", async () => {
    const queue = new FairQueue({ maxWaitMs: 60_000 });
    const started: string[] = [];
    const jobs = new Map<string, ReturnType<typeof manualJob>>();
    const submit = (tenant: string, name: string) => {
      const job = manualJob(name, started);
      jobs.set(name, job);
      return queue.run(tenant, job.run);
    };
    const answers = [
      submit('A', 'a1'),
      submit('A', 'a2'),
      submit('A', 'a3'),
      submit('A', 'a4'),
      submit('B', 'b1'),
      submit('C', 'c1'),
      submit('B', 'b2'),
    ];
    await settle();
    assert.deepEqual(started, ['a1'], 'one at a time');
    assert.equal(queue.size, 6);
    for (const name of ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']) {
      assert.equal(started.at(-1), name);
      jobs.get(name)!.finish();
      await settle();
    }
    assert.deepEqual(started, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    assert.deepEqual(
      (await Promise.all(answers)).map((a) => (a.ran ? a.value : null)),
      ['a1', 'a2', 'a3', 'a4', 'b1', 'c1', 'b2'],
    );
    assert.equal(queue.size, 0);
  });

  it('a tenant arriving while another works through its backlog is served as soon as the running job ends', async () => {
    const queue = new FairQueue({ maxWaitMs: 60_000 });
    const started: string[] = [];
    const jobs = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => manualJob(n, started));
    const a = jobs.map((j) => queue.run('A', j.run));
    await settle();
    jobs[0]!.finish(); // a1 done, a2 running
    await settle();
    const b = manualJob('b1', started);
    const bAnswer = queue.run('B', b.run);
    jobs[1]!.finish(); // a2 done: B's turn before a3
    await settle();
    assert.deepEqual(started, ['a1', 'a2', 'b1']);
    b.finish();
    assert.deepEqual(await bAnswer, { ran: true, value: 'b1' });
    for (const j of jobs.slice(2)) {
      await settle();
      j.finish();
    }
    assert.equal((await Promise.all(a)).length, 5);
  });

  it('a job that waited past the bound is dropped unrun and its caller told so; the others run', async () => {
    const queue = new FairQueue({ maxWaitMs: 30 });
    const started: string[] = [];
    const holder = manualJob('held', started);
    const held = queue.run('A', holder.run);
    const late = queue.run('B', async () => {
      started.push('late');
      return 'late';
    });
    assert.deepEqual(await late, { ran: false, reason: 'waited_too_long' });
    assert.equal(queue.size, 0, 'dropped from its queue');
    holder.finish();
    assert.deepEqual(await held, { ran: true, value: 'held' }, 'a job that started runs to its end, however long');
    assert.deepEqual(await queue.run('B', async () => 'next'), { ran: true, value: 'next' });
    assert.deepEqual(started, ['held']);
  });

  it('keeps the rotation across thousands of tenants: every first job before any second one, in arrival order', async () => {
    const queue = new FairQueue({ maxWaitMs: 60_000 });
    const started: string[] = [];
    const tenants = Array.from({ length: 2_500 }, (_, i) => `t${i}`);
    const answers = tenants.flatMap((t) =>
      [1, 2].map((n) =>
        queue.run(t, async () => {
          started.push(`${t}/${n}`);
        }),
      ),
    );
    await Promise.all(answers);
    assert.deepEqual(started, [...tenants.map((t) => `${t}/1`), ...tenants.map((t) => `${t}/2`)]);
  });

  it('a failing job fails its own caller only, and the next job runs', async () => {
    const queue = new FairQueue({ maxWaitMs: 60_000 });
    const failing = queue.run('A', async () => {
      throw new Error('boom');
    });
    const throwing = queue.run('A', () => {
      throw new Error('sync boom');
    });
    const next = queue.run('B', async () => 'ok');
    await assert.rejects(failing, /boom/);
    await assert.rejects(throwing, /sync boom/);
    assert.deepEqual(await next, { ran: true, value: 'ok' });
  });

  describe('many at once, a bounded share each (the pay admission)', () => {
    it("a job with room starts in the caller's tick; past the tenant's own bound its jobs wait while others start", async () => {
      const queue = new FairQueue({ maxWaitMs: 60_000, concurrency: 3, perTenantConcurrency: 2 });
      const started: string[] = [];
      const jobs = ['a1', 'a2', 'a3'].map((n) => manualJob(n, started));
      const answers = jobs.map((j) => queue.run('A', j.run));
      assert.deepEqual(started, ['a1', 'a2'], "started synchronously, up to the tenant's bound");
      assert.deepEqual([queue.running, queue.size], [2, 1]);
      const b = manualJob('b1', started);
      const bAnswer = queue.run('B', b.run);
      assert.deepEqual(started, ['a1', 'a2', 'b1'], 'the third place goes to another tenant at once');
      jobs[0]!.finish();
      await settle();
      assert.deepEqual(started, ['a1', 'a2', 'b1', 'a3'], "A's next starts once one of its own ended");
      for (const j of [jobs[1]!, jobs[2]!, b]) j.finish();
      assert.deepEqual(
        (await Promise.all([...answers, bAnswer])).map((a) => a.ran),
        [true, true, true, true],
      );
      assert.deepEqual([queue.running, queue.size], [0, 0]);
    });

    it('a freed place goes to the waiting tenants in turn, not to the one with the longest backlog', async () => {
      const queue = new FairQueue({ maxWaitMs: 60_000, concurrency: 2, perTenantConcurrency: 2 });
      const started: string[] = [];
      const all = new Map<string, ReturnType<typeof manualJob>>();
      const submit = (tenant: string, name: string) => {
        const job = manualJob(name, started);
        all.set(name, job);
        return queue.run(tenant, job.run);
      };
      const answers = ['a1', 'a2', 'a3', 'a4', 'a5'].map((n) => submit('A', n));
      answers.push(submit('B', 'b1'), submit('C', 'c1'), submit('B', 'b2'));
      assert.deepEqual(started, ['a1', 'a2']);
      // The oldest running job ends each time: A had its two turns, so B and C come before A's third.
      for (let finished = 0; finished < 8; finished++) {
        all.get(started[finished]!)!.finish();
        await settle();
      }
      assert.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4', 'a5']);
      assert.equal((await Promise.all(answers)).length, 8);
    });

    it("past a tenant's waiting bound its next job is refused; a full queue makes room from the longest backlog", async () => {
      const queue = new FairQueue({ maxWaitMs: 60_000, concurrency: 1, perTenantWaiting: 2, maxWaiting: 3 });
      const started: string[] = [];
      const holder = manualJob('held', started);
      const held = queue.run('A', holder.run);
      const waiting = [queue.run('A', async () => 'a2'), queue.run('A', async () => 'a3')];
      let ranPastBound = false;
      const refused = await queue.run('A', async () => {
        ranPastBound = true;
      });
      assert.deepEqual(refused, { ran: false, reason: 'tenant_queue_full' });
      const b = queue.run('B', async () => 'b1');
      assert.equal(queue.size, 3);
      // Full: A, two waiting against C's none, gives up its newest; C waits in its place.
      const c = queue.run('C', async () => 'c1');
      assert.deepEqual(await waiting[1], { ran: false, reason: 'queue_full' });
      assert.equal(queue.size, 3);
      // Full again, and no backlog is two longer than D's: D is refused.
      assert.deepEqual(await queue.run('D', async () => 'd1'), { ran: false, reason: 'queue_full' });
      holder.finish();
      assert.deepEqual(
        (await Promise.all([held, waiting[0]!, b, c])).map((a) => (a.ran ? a.value : a.reason)),
        ['held', 'a2', 'b1', 'c1'],
      );
      assert.equal(ranPastBound, false);
      assert.equal(queue.size, 0);
    });

    it('a job whose caller went away while it waited is dropped unrun; one that started runs to its end', async () => {
      const queue = new FairQueue({ maxWaitMs: 60_000, concurrency: 1 });
      const started: string[] = [];
      const holder = manualJob('held', started);
      let listening = 0;
      const gone: Array<() => void> = [];
      const whenGone = (drop: () => void) => {
        listening++;
        gone.push(drop);
        return () => listening--;
      };
      const held = queue.run('A', holder.run, whenGone);
      assert.equal(listening, 0, 'a job that starts at once is not watched');
      const left = queue.run('B', async () => started.push('left'), whenGone);
      const stays = queue.run('C', async () => 'stays', whenGone);
      assert.equal(listening, 2);
      gone[0]!();
      assert.deepEqual(await left, { ran: false, reason: 'abandoned' });
      assert.equal(listening, 1, 'stopped listening once refused');
      holder.finish();
      assert.deepEqual(await held, { ran: true, value: 'held' });
      assert.deepEqual(await stays, { ran: true, value: 'stays' });
      assert.equal(listening, 0, 'stopped listening once started');
      gone[1]!(); // the caller of a started job goes away: nothing to drop
      assert.deepEqual(started, ['held']);
      assert.equal(queue.size, 0);
    });
  });
});

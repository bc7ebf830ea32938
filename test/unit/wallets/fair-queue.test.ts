/**
 * The fair queue of the wallet audit's full verifications (src/api/wallets/fair-queue.ts): one job at a time;
 * tenants served round-robin, so one tenant's backlog delays another's first job by the running job at most;
 * a job that waited past the bound never runs and its caller is told so; a failing job fails its caller only.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FairQueue } from '../../../src/api/wallets/fair-queue.js';

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
    assert.deepEqual(await late, { ran: false });
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
});

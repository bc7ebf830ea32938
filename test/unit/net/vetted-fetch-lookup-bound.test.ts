/**
 * vettedGet (src/api/net/vetted-fetch.ts) takes a slot of src/api/net/lookup-slots.ts for each host-name lookup:
 * lookups that never answer (a zone whose nameserver drops queries) hold at most MAX_LOOKUPS_IN_FLIGHT slots,
 * however many requests name such hosts; a request that cannot get a slot before its deadline is refused with
 * the usual `timeout` and its lookup never starts, not even once a slot frees later. The resolver is a fake
 * that counts the lookups it is running; no real DNS.
 */
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LookupSlots, MAX_LOOKUPS_IN_FLIGHT } from '../../../src/api/net/lookup-slots.js';
import { OutboundError, vettedGet, type HostResolver } from '../../../src/api/net/vetted-fetch.js';

const refusedWith = (reason: string) => (e: unknown) => e instanceof OutboundError && e.reason === reason;

/** A resolver whose lookups answer only when the test says so; counts those running and the most at once. */
function heldResolver() {
  const started: string[] = [];
  const pending: Array<() => void> = [];
  let running = 0;
  let peak = 0;
  const resolveHost: HostResolver = (hostname) => {
    started.push(hostname);
    peak = Math.max(peak, ++running);
    return new Promise((_resolve, reject) =>
      pending.push(() => {
        running--;
        reject(new Error('SERVFAIL'));
      }),
    );
  };
  return {
    resolveHost,
    started,
    peak: () => peak,
    /** Every running lookup answers (a failure, as a dead zone's finally does). */
    answerAll: () => pending.splice(0).forEach((answer) => answer()),
  };
}

describe('vettedGet lookups in flight', () => {
  it('starts at most MAX_LOOKUPS_IN_FLIGHT never-answering lookups; the rest time out without starting, ever', async () => {
    const slots = new LookupSlots(MAX_LOOKUPS_IN_FLIGHT);
    const fake = heldResolver();
    const hosts = Array.from({ length: 8 }, (_, i) => `dead${i}.test`);
    const calls = hosts.map((host) =>
      vettedGet(new URL(`http://${host}/`), {
        allowPrivate: false,
        resolveHost: fake.resolveHost,
        lookupSlots: slots,
        timeoutMs: 50,
        maxBytes: 100,
      }),
    );
    for (const call of calls) await assert.rejects(call, refusedWith('timeout'));
    assert.equal(fake.peak(), MAX_LOOKUPS_IN_FLIGHT, 'lookups running at once');
    assert.deepEqual(fake.started, hosts.slice(0, MAX_LOOKUPS_IN_FLIGHT), 'the first arrivals got the slots');
    // The callers have their answer, but the lookups still hold their threads: the slots stay taken.
    assert.deepEqual([slots.inFlight, slots.queued], [MAX_LOOKUPS_IN_FLIGHT, 0]);

    // The dead zone answers at last: the slots free, and no request past its deadline starts its lookup then.
    fake.answerAll();
    await nextTurn();
    await nextTurn();
    assert.deepEqual(fake.started, hosts.slice(0, MAX_LOOKUPS_IN_FLIGHT), 'no lookup started after its deadline');
    assert.deepEqual([slots.inFlight, slots.queued], [0, 0]);
  });

  it('gives a freed slot to the next request still within its deadline, in arrival order', async () => {
    const slots = new LookupSlots(1);
    const fake = heldResolver();
    const policy = fakePolicy(fake, slots);
    const first = vettedGet(new URL('http://first.test/'), policy);
    const second = vettedGet(new URL('http://second.test/'), policy);
    await nextTurn();
    assert.deepEqual([fake.started, slots.queued], [['first.test'], 1]);
    fake.answerAll();
    await assert.rejects(first, refusedWith('unresolvable'));
    await nextTurn();
    assert.deepEqual(fake.started, ['first.test', 'second.test']);
    fake.answerAll();
    await assert.rejects(second, refusedWith('unresolvable'));
    assert.equal(fake.peak(), 1);
    assert.deepEqual([slots.inFlight, slots.queued], [0, 0]);
  });

  it('takes no slot for an IP literal', async () => {
    const slots = new LookupSlots(1);
    const fake = heldResolver();
    const held = vettedGet(new URL('http://held.test/'), { ...fakePolicy(fake, slots), timeoutMs: 10_000 });
    await assert.rejects(
      vettedGet(new URL('http://127.0.0.1/'), fakePolicy(fake, slots)),
      refusedWith('address_refused'),
    );
    assert.deepEqual(fake.started, ['held.test']);
    fake.answerAll();
    await assert.rejects(held, refusedWith('unresolvable'));
  });
});

function fakePolicy(fake: ReturnType<typeof heldResolver>, slots: LookupSlots) {
  return { allowPrivate: false, resolveHost: fake.resolveHost, lookupSlots: slots, maxBytes: 100 };
}

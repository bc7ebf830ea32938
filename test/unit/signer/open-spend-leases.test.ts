/**
 * The leases that let a wallet without a signed policy have its spends recorded after release
 * (signer/owner-policy/open-spend-leases.ts): a lease runs from the statement that saw the wallet's row without a
 * policy (or its rows' instant, if older) for `leaseMs`; a queued spend can be taken back; a wallet that gained a
 * policy has its queued spends recorded anyway and loses its lease; a failed write is kept and renews nothing;
 * a suspended wallet (its policy being set) gets no lease; a wallet read with a policy is never held open again.
 */
import assert from 'node:assert/strict';
import { OpenSpendLeases } from '../../../signer/owner-policy/open-spend-leases.js';
import type { OpenOutcome, SpendRow } from '../../../signer/owner-policy/spend-statements.js';

const W = '0x' + 'a'.repeat(40);
const V = '0x' + 'b'.repeat(40);

function harness(answer: (rows: SpendRow[]) => Map<string, OpenOutcome> | Error) {
  let clock = 1_000_000;
  const open: SpendRow[][] = [];
  const anyway: SpendRow[][] = [];
  const leases = new OpenSpendLeases({
    recordOpen: async (rows) => {
      const a = answer(rows);
      if (a instanceof Error) throw a;
      open.push(rows);
      return a;
    },
    recordAnyway: async (rows) => void anyway.push(rows),
    leaseMs: 250,
    rowAgeMs: 1000,
    flushDelayMs: 60_000,
    now: () => clock,
  });
  const row = (ref: string, address = W): SpendRow => [ref, address, '1', V, new Date()];
  return { leases, open, anyway, row, advance: (ms: number) => (clock += ms) };
}

describe('OpenSpendLeases (spends of wallets without a signed policy, after release)', () => {
  it('holds a lease for leaseMs from the statement that saw the row without a policy', () => {
    const { leases, advance } = harness(() => new Map());
    assert.equal(leases.holds(W), false);
    leases.renew(W, 1_000_000);
    advance(249);
    assert.equal(leases.holds(W), true);
    advance(1);
    assert.equal(leases.holds(W), false, 'expired');
    leases.close();
  });

  it('writes the queue, renews the open wallets, records anyway and drops the one that gained a policy', async () => {
    const { leases, open, anyway, row, advance } = harness(
      () =>
        new Map<string, OpenOutcome>([
          [W, 'recorded'],
          [V, 'has_policy'],
        ]),
    );
    leases.renew(W, 1_000_000);
    leases.renew(V, 1_000_000);
    leases.enqueue(row('a'));
    leases.enqueue(row('b', V));
    advance(200);
    await leases.flush();
    assert.deepEqual(
      open.flat().map((r) => r[0]),
      ['a', 'b'],
    );
    assert.deepEqual(
      anyway.flat().map((r) => r[0]),
      ['b'],
      "counted all the same, raising the wallet's counter",
    );
    advance(200);
    assert.equal(leases.holds(W), true, 'renewed from the write');
    assert.equal(leases.holds(V), false, 'the wallet with a policy is decided from now on');
    leases.close();
  });

  it('takes back a queued spend; keeps a failed write and renews nothing', async () => {
    let fail = true;
    const { leases, open, row, advance } = harness(() => (fail ? new Error('store down') : new Map([[W, 'recorded']])));
    leases.renew(W, 1_000_000);
    leases.enqueue(row('a'));
    leases.enqueue(row('b'));
    assert.equal(await leases.giveBack('a'), true);
    await assert.rejects(leases.flush(), /store down/);
    advance(300);
    assert.equal(leases.holds(W), false, 'no write renewed it: the next spend is recorded before release');
    fail = false;
    await leases.flush();
    assert.deepEqual(
      open.flat().map((r) => r[0]),
      ['b'],
      'the kept spend is written on the next try',
    );
    leases.close();
  });

  it('keeps every wallet known open fresh with one read of the policy changes, and drops those it names', async () => {
    let clock = 0;
    let changed: string[] = [];
    const leases = new OpenSpendLeases({
      recordOpen: async () => new Map(),
      recordAnyway: async () => undefined,
      changedSince: async () => ({ seq: '7', addresses: changed }),
      leaseMs: 250,
      rowAgeMs: 1000,
      flushDelayMs: 60_000,
      now: () => clock,
    });
    leases.watchChanges('5');
    clock = 10;
    leases.renew(W, 10);
    leases.renew(V, 10);
    clock = 400;
    assert.equal(leases.holds(W), false, 'no read of the changes since: stale');
    await (leases as any).readChanges();
    assert.equal(leases.holds(W), true, 'a read sent at 400 keeps the wallets known open fresh');
    changed = [W];
    clock = 500;
    await (leases as any).readChanges();
    assert.equal(leases.holds(W), false, 'a policy was accepted for it');
    assert.equal(leases.holds(V), true);
    leases.renew(W, 450);
    assert.equal(leases.holds(W), true, 'its own lease from a statement sent at 450');
    clock = 720;
    assert.equal(
      leases.holds(W),
      false,
      'but it is not known open again: that statement left before the read was answered',
    );
    leases.close();
  });

  it('never holds open a wallet this process read with a policy, whatever the feed of changes said', async () => {
    let clock = 0;
    const leases = new OpenSpendLeases({
      recordOpen: async () => new Map(),
      recordAnyway: async () => undefined,
      // A feed that missed the wallet's policy.
      changedSince: async () => ({ seq: '7', addresses: [] }),
      leaseMs: 250,
      rowAgeMs: 1000,
      flushDelayMs: 60_000,
      now: () => clock,
    });
    leases.watchChanges('5');
    clock = 10;
    leases.renew(W, 10);
    await (leases as any).readChanges();
    assert.equal(leases.holds(W), true, 'known open');
    leases.hasPolicy(W);
    assert.equal(leases.holds(W), false, 'read with a policy: decided from now on');
    clock = 20;
    leases.renew(W, 20);
    await (leases as any).readChanges();
    assert.equal(leases.holds(W), false, 'a statement that saw no policy is older than what this process read');
    leases.close();
  });

  it('gives no lease to a wallet whose policy is being set', () => {
    const { leases } = harness(() => new Map());
    leases.renew(W, 1_000_000);
    const resume = leases.suspend(W);
    assert.equal(leases.holds(W), false);
    leases.renew(W, 1_000_000);
    assert.equal(leases.holds(W), false);
    resume();
    leases.renew(W, 1_000_000);
    assert.equal(leases.holds(W), true);
    leases.close();
  });

  it('a scheduled write the store refuses is kept and tried again, never an unhandled rejection (the signer would exit)', async () => {
    let refuse = true;
    const written: SpendRow[][] = [];
    const leases = new OpenSpendLeases({
      recordOpen: async (rows) => {
        if (refuse) throw new Error('database is not currently accepting connections');
        written.push(rows);
        return new Map<string, OpenOutcome>([[W, 'recorded']]);
      },
      recordAnyway: async () => undefined,
      leaseMs: 250,
      rowAgeMs: 1000,
      flushDelayMs: 1,
    });
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    // mocha's own listener would fail the run on its own; this one records what the signer's main would see.
    const before = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', listener);
    try {
      leases.renew(W, performance.now());
      leases.enqueue([`r1`, W, '1', V, new Date()]);
      // The scheduled write fails; its retry timer (100 ms) waits; give the rejection a turn to surface.
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(unhandled, [], 'a refused scheduled write is no unhandled rejection');
      refuse = false;
      for (let waited = 0; written.length === 0; waited += 20) {
        assert.ok(waited < 5_000, 'the kept row is written once the store answers');
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(written[0]![0]![0], 'r1');
    } finally {
      process.removeListener('unhandledRejection', listener);
      for (const l of before) process.on('unhandledRejection', l);
      leases.close();
    }
  });
});

/**
 * The expired-reservation sweep releases each reservation on its own (src/api/pay/expired-reservation-sweeper.ts):
 * one release that fails — a lock time-out on one tenant's busy wallet — neither holds back the other rows of the
 * sweep nor is skipped for good: the sweep says how many failed (SweepIncompleteError) and reads the same range
 * again next time, when the row is released. The rows come from a stand-in for the one SELECT the sweep makes; the
 * release is the sweep's seam.
 */
import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { ExpiredReservationSweeper, SweepIncompleteError } from '../../../src/api/pay/expired-reservation-sweeper.js';

const now = new Date('2026-12-01T12:00:00Z');
const expired = (id: string, wallet: string) => ({
  id,
  wallet_id: wallet,
  decision_id: `pd_${id}`,
  amount_micro: '1000',
  nonce: `0x${'00'.repeat(32)}`,
  actor: 'pat_x',
  created_at: new Date(now.getTime() - 3_600_000),
  valid_before: String(Math.floor(now.getTime() / 1000) - 3_000),
});

describe('expired-reservation sweep: one failed release holds back no other', () => {
  it('releases the other tenants’ rows, reports the failure, and releases the failed row on the next sweep', async () => {
    const reserved = new Map([
      ['a1', expired('a1', 'wal_busy')],
      ['b1', expired('b1', 'wal_other')],
      ['c1', expired('c1', 'wal_third')],
    ]);
    const knex = { raw: async () => ({ rows: [...reserved.values()] }) } as unknown as Knex;
    let busy = true;
    const released: string[] = [];
    const sweeper = new ExpiredReservationSweeper(knex, createTreasuryMetrics(), () => now, {
      release: async (_knex, r) => {
        if (r.walletId === 'wal_busy' && busy) throw new Error('canceling statement due to lock timeout');
        released.push(r.authorizationId);
        reserved.delete(r.authorizationId);
        return true;
      },
    });
    await assert.rejects(sweeper.sweep(), (err: unknown) => {
      assert.ok(err instanceof SweepIncompleteError);
      assert.deepEqual([err.released, err.failed], [2, 1]);
      return true;
    });
    assert.deepEqual(released.sort(), ['b1', 'c1'], 'the rows after the failed one are released');
    busy = false;
    assert.equal(await sweeper.sweep(), 1, 'the failed row is read again and released');
    assert.deepEqual(released.sort(), ['a1', 'b1', 'c1']);
  });
});

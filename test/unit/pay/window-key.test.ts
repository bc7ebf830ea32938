/** windowKey (src/api/pay/pay-snapshot.ts): the UTC day, week and month of an instant, remembered by day, the same as computed afresh. */
import assert from 'node:assert/strict';
import { policyWindows } from '../../../policy/policy-windows.js';
import { windowKey } from '../../../src/api/pay/pay-snapshot.js';
import { isoDate } from '../../../src/api/pay/store/pay-statements.js';

const afresh = (at: Date) => {
  const w = policyWindows(at);
  return `${isoDate(w.dayStart)}|${isoDate(w.weekStart)}|${isoDate(w.monthStart)}`;
};

describe('windowKey', () => {
  it('names the day, week and month of every instant, across day, week, month and year ends, back and forth', () => {
    const instants = [
      '2026-11-29T23:59:59.999Z',
      '2026-11-30T00:00:00.000Z',
      '2026-11-29T12:00:00.000Z',
      '2026-11-30T23:59:59.999Z',
      '2026-12-01T00:00:00.000Z',
      '2026-12-31T23:59:59.999Z',
      '2027-01-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '1970-01-01T00:00:00.000Z',
    ];
    for (const iso of instants) assert.equal(windowKey(new Date(iso)), afresh(new Date(iso)), iso);
  });

  it('refuses an invalid date as policyWindows does', () => {
    assert.throws(() => windowKey(new Date(NaN)));
  });
});

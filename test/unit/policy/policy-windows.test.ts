/**
 * policy-windows.ts: UTC calendar window starts (midnight, ISO-week Monday, the 1st — across year ends and a
 * leap February), the rolling velocity window, and seeded properties over four centuries of instants.
 */
import assert from 'node:assert/strict';
import { PolicyInputError } from '../../../policy/policy-errors.js';
import { policyWindows, velocityWindowStart } from '../../../policy/policy-windows.js';
import { NOW, seeded } from './policy-fixtures.js';

const w = (iso: string) => {
  const x = policyWindows(new Date(iso));
  return { day: x.dayStart.toISOString(), week: x.weekStart.toISOString(), month: x.monthStart.toISOString() };
};
const DAY_MS = 86_400_000;

describe('policyWindows (UTC calendar)', () => {
  it('starts the day at 00:00 UTC: 23:59:59.999 is still today, 00:00:00.000 is the new day', () => {
    assert.equal(w('2026-11-22T23:59:59.999Z').day, '2026-11-22T00:00:00.000Z');
    assert.equal(w('2026-11-23T00:00:00.000Z').day, '2026-11-23T00:00:00.000Z');
    assert.equal(w('2026-11-23T00:00:00.001Z').day, '2026-11-23T00:00:00.000Z');
  });

  it('ignores the process time zone and DST: an instant given with an offset is placed by UTC', () => {
    assert.equal(w('2026-03-29T01:30:00+02:00').day, '2026-03-28T00:00:00.000Z');
  });

  it('starts the ISO week on Monday 00:00 UTC: Sunday 23:59:59.999 belongs to the previous week', () => {
    assert.equal(w('2026-11-22T23:59:59.999Z').week, '2026-11-16T00:00:00.000Z'); // Sunday
    assert.equal(w('2026-11-23T00:00:00.000Z').week, '2026-11-23T00:00:00.000Z'); // Monday
    assert.equal(w('2026-11-28T12:00:00.000Z').week, '2026-11-23T00:00:00.000Z'); // Saturday
  });

  it('keeps the ISO week across a year boundary', () => {
    // 2026-12-28 is a Monday; the week runs into 2027.
    assert.equal(w('2026-12-31T23:59:59.999Z').week, '2026-12-28T00:00:00.000Z');
    assert.equal(w('2027-01-01T00:00:00.000Z').week, '2026-12-28T00:00:00.000Z');
    assert.equal(w('2027-01-03T23:59:59.999Z').week, '2026-12-28T00:00:00.000Z'); // Sunday
    assert.equal(w('2027-01-04T00:00:00.000Z').week, '2027-01-04T00:00:00.000Z'); // Monday
    // 2026-01-01 is a Thursday; its week began Monday 2025-12-29.
    assert.equal(w('2026-01-01T08:00:00.000Z').week, '2025-12-29T00:00:00.000Z');
  });

  it('starts the month on the 1st 00:00 UTC, a leap February and a year end included', () => {
    assert.equal(w('2028-02-29T23:59:59.999Z').month, '2028-02-01T00:00:00.000Z');
    assert.equal(w('2028-03-01T00:00:00.000Z').month, '2028-03-01T00:00:00.000Z');
    assert.equal(w('2027-02-28T23:59:59.999Z').month, '2027-02-01T00:00:00.000Z');
    assert.equal(w('2027-03-01T00:00:00.000Z').month, '2027-03-01T00:00:00.000Z');
    assert.equal(w('2026-12-31T23:59:59.999Z').month, '2026-12-01T00:00:00.000Z');
    assert.equal(w('2027-01-01T00:00:00.000Z').month, '2027-01-01T00:00:00.000Z');
  });

  it('handles years below 100 (no Date.UTC two-digit-year mapping)', () => {
    const x = policyWindows(new Date('0050-06-15T12:00:00Z'));
    assert.equal(x.dayStart.getUTCFullYear(), 50);
    assert.equal(x.monthStart.toISOString(), '0050-06-01T00:00:00.000Z');
  });

  it('refuses an invalid Date instead of yielding NaN windows', () => {
    assert.throws(() => policyWindows(new Date('nope')), PolicyInputError);
    assert.throws(() => policyWindows('2026-01-01' as unknown as Date), PolicyInputError);
  });

  it('property: for 5,000 seeded instants in 1970–2400, each window contains now and starts where it should', () => {
    const rng = seeded(2026n);
    const span = BigInt(Date.UTC(2400, 0, 1));
    for (let i = 0; i < 5_000; i++) {
      const now = new Date(Number(rng.below(span)));
      const { dayStart, weekStart, monthStart } = policyWindows(now);
      const t = now.getTime();
      assert.ok(dayStart.getTime() <= t && t < dayStart.getTime() + DAY_MS, now.toISOString());
      assert.equal(dayStart.getTime() % DAY_MS, 0);
      assert.equal(weekStart.getUTCDay(), 1, now.toISOString());
      assert.ok(weekStart.getTime() <= dayStart.getTime() && t < weekStart.getTime() + 7 * DAY_MS, now.toISOString());
      assert.equal(monthStart.getUTCDate(), 1);
      assert.equal(monthStart.getUTCMonth(), now.getUTCMonth());
      assert.equal(monthStart.getUTCFullYear(), now.getUTCFullYear());
      assert.equal(monthStart.getTime() % DAY_MS, 0);
    }
  });
});

describe('velocityWindowStart', () => {
  it('is now − window_seconds, or null without a velocity cap', () => {
    assert.equal(
      velocityWindowStart({ velocity_cap: { max_count: 3, window_seconds: 60 } }, NOW)?.toISOString(),
      '2026-11-22T11:59:00.000Z',
    );
    assert.equal(velocityWindowStart({}, NOW), null);
    assert.throws(() => velocityWindowStart({}, new Date(Number.NaN)), PolicyInputError);
  });
});

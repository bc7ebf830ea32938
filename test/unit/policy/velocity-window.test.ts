/**
 * A remembered velocity window is aged exactly: each known payment time that left the window takes one off
 * the count, never an unknown one; when none known is left while unknown ones remain, it must be read again.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  addToVelocityWindow,
  ageVelocityWindow,
  ageVelocityWindowFrom,
  timestampFromUs,
  velocityReadPoint,
  velocityReadPointFrom,
  velocityWindowReadOn,
  VELOCITY_TIMES_KEPT,
  type VelocityReadOn,
  type VelocityReadPoint,
  type VelocityWindow,
} from '../../../policy/velocity-window.js';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const us = (ms: number) => ms * 1000;
const at = (ms: number) => new Date(T0 + ms);

describe('velocity window (remembered snapshot)', () => {
  it('takes off only the known payments that left the window, at the SQL bound (created_at > now − window)', () => {
    const recent = { count: 3, oldest_us: [us(T0), us(T0 + 10_000), us(T0 + 20_000)] };
    assert.equal(ageVelocityWindow(recent, 60, at(59_999)), recent, 'nothing left yet: the same window');
    // At now = T0 + 60 s the window starts at T0, which it excludes.
    assert.deepEqual(ageVelocityWindow(recent, 60, at(60_000)), {
      count: 2,
      oldest_us: [us(T0 + 10_000), us(T0 + 20_000)],
    });
    assert.deepEqual(ageVelocityWindow(recent, 60, at(80_000)), { count: 0, oldest_us: [] });
  });

  it('compares in microseconds: a payment 1 µs after the window start still counts', () => {
    const recent = { count: 1, oldest_us: [us(T0) + 1] };
    assert.equal(ageVelocityWindow(recent, 60, at(60_000))!.count, 1);
    assert.equal(ageVelocityWindow(recent, 60, at(60_001))!.count, 0);
  });

  it('is not known once every known time left and unknown ones remain', () => {
    const recent = { count: 5, oldest_us: [us(T0), us(T0 + 1_000)] };
    assert.deepEqual(ageVelocityWindow(recent, 60, at(60_500)), { count: 4, oldest_us: [us(T0 + 1_000)] });
    assert.equal(ageVelocityWindow(recent, 60, at(61_000)), undefined);
  });

  it('adds a payment: appended while the list holds every payment, counted only once it does not', () => {
    let w = { count: 0, oldest_us: [] as number[] };
    for (let i = 0; i < VELOCITY_TIMES_KEPT + 3; i++) w = addToVelocityWindow(w, at(i));
    assert.equal(w.count, VELOCITY_TIMES_KEPT + 3);
    assert.equal(w.oldest_us.length, VELOCITY_TIMES_KEPT);
    assert.equal(w.oldest_us[0], us(T0));
    // The first 32 leave one by one; the last three are unknown, so once the 32nd left the count is unknown.
    assert.equal(ageVelocityWindow(w, 1, at(1_000 + VELOCITY_TIMES_KEPT - 2))!.count, 4);
    assert.equal(ageVelocityWindow(w, 1, at(1_000 + VELOCITY_TIMES_KEPT - 1)), undefined);
    const partial = addToVelocityWindow({ count: 3, oldest_us: [us(T0)] }, at(5));
    assert.deepEqual(
      partial,
      { count: 4, oldest_us: [us(T0)] },
      'unknown times lie between: the new one is not listed',
    );
  });

  describe('read on once every known time left', () => {
    /** What VELOCITY_READ_ON_SQL finds over the payments (µs) not released, at `now` with a window of `w` seconds. */
    const readOn = (paid: number[], point: VelocityReadPoint, w: number, now: Date): VelocityReadOn => {
      const startUs = now.getTime() * 1000 - w * 1_000_000;
      const sorted = [...paid].sort((a, b) => a - b);
      const oldest_us = sorted.filter((t) => t > startUs).slice(0, VELOCITY_TIMES_KEPT);
      const full = oldest_us.length === VELOCITY_TIMES_KEPT;
      return { left: full ? sorted.filter((t) => t >= point.lastKnownUs && t <= startUs).length : 0, oldest_us };
    };
    /** What a full read (SNAPSHOT_SQL) counts. */
    const fullRead = (paid: number[], w: number, now: Date): VelocityWindow => {
      const startUs = now.getTime() * 1000 - w * 1_000_000;
      const inside = paid.filter((t) => t > startUs).sort((a, b) => a - b);
      return { count: inside.length, oldest_us: inside.slice(0, VELOCITY_TIMES_KEPT) };
    };

    it('is asked only when every known time left and unknown ones remain', () => {
      const known = Array.from({ length: VELOCITY_TIMES_KEPT }, (_, i) => us(T0 + i));
      const recent = { count: 40, oldest_us: known };
      assert.equal(
        velocityReadPoint(recent, 1, at(1_000 + VELOCITY_TIMES_KEPT - 2)),
        undefined,
        'one known left inside',
      );
      assert.deepEqual(velocityReadPoint(recent, 1, at(1_000 + VELOCITY_TIMES_KEPT - 1)), {
        lastKnownUs: us(T0 + VELOCITY_TIMES_KEPT - 1),
        knownAtLast: 1,
        count: 40 - VELOCITY_TIMES_KEPT,
      });
      assert.equal(
        velocityReadPoint({ count: 3, oldest_us: [us(T0), us(T0), us(T0)] }, 1, at(2_000)),
        undefined,
        'all known',
      );
      assert.equal(velocityReadPoint({ count: 0, oldest_us: [] }, 1, at(2_000)), undefined);
    });

    it('takes off a payment at the last known time once, whether it was known or not', () => {
      // When read: 30 payments at distinct times, four at one millisecond (two of them known), 40 more after.
      const paid = [
        ...Array.from({ length: 30 }, (_, i) => us(T0 + i)),
        ...Array(4).fill(us(T0 + 30)),
        ...Array.from({ length: 40 }, (_, i) => us(T0 + 40 + i)),
      ];
      const read = fullRead(paid, 1, at(500));
      assert.equal(read.count, 74);
      const now = at(1_030);
      const point = velocityReadPoint(read, 1, now)!;
      assert.deepEqual(point, { lastKnownUs: us(T0 + 30), knownAtLast: 2, count: 42 });
      // Left from the last known time to the window's start: the four at T0 + 30 ms, two of which were taken off already.
      const found = readOn(paid, point, 1, now);
      assert.equal(found.left, 4);
      assert.equal(found.oldest_us.length, VELOCITY_TIMES_KEPT, 'more in the window than a list holds');
      assert.deepEqual(velocityWindowReadOn(point, found), fullRead(paid, 1, now));
      assert.equal(fullRead(paid, 1, now).count, 40);
    });

    it('reads on from the newest known time, not the last listed, when the clock stepped back while the list filled', () => {
      // 30 payments, one at T0 + 100 ms, then the clock steps back: one at T0 + 50 ms (the list's 32nd), ten more
      // unknown at T0 + 60–69 ms, and later 40 more at T0 + 150–189 ms.
      let recent: VelocityWindow = { count: 0, oldest_us: [] };
      const paid: number[] = [];
      const payAt = (ms: number) => {
        paid.push(us(T0 + ms));
        recent = addToVelocityWindow(recent, at(ms));
      };
      for (let i = 0; i < 30; i++) payAt(i);
      [100, 50].forEach(payAt);
      for (let i = 60; i < 70; i++) payAt(i);
      for (let i = 150; i < 190; i++) payAt(i);
      assert.deepEqual(recent.oldest_us.slice(-2), [us(T0 + 100), us(T0 + 50)]);
      const now = at(1_100);
      const point = velocityReadPoint(recent, 1, now)!;
      assert.deepEqual(point, { lastKnownUs: us(T0 + 100), knownAtLast: 1, count: 50 });
      const window = velocityWindowReadOn(point, readOn(paid, point, 1, now))!;
      // Ten unknown payments older than the newest known one left unseen: the count stays high, never low.
      assert.equal(fullRead(paid, 1, now).count, 40);
      assert.equal(window.count, 50);
    });

    it('trusts a read on that finds a full list only while the count agrees with it', () => {
      const point = { lastKnownUs: us(T0), knownAtLast: 1, count: 40 };
      const full = Array.from({ length: VELOCITY_TIMES_KEPT }, (_, i) => us(T0 + 10 + i));
      assert.deepEqual(velocityWindowReadOn(point, { left: 3, oldest_us: full }), { count: 38, oldest_us: full });
      assert.equal(velocityWindowReadOn(point, { left: 10, oldest_us: full }), undefined, 'fewer counted than found');
      assert.equal(velocityWindowReadOn(point, { left: 0.5, oldest_us: full }), undefined);
      assert.equal(velocityWindowReadOn(point, { left: 0, oldest_us: [...full, us(T0 + 99)] }), undefined);
      // Fewer than the list holds found: that is every payment in the window, as a full read counts it.
      assert.deepEqual(velocityWindowReadOn(point, { left: 39, oldest_us: full.slice(0, 5) }), {
        count: 5,
        oldest_us: full.slice(0, 5),
      });
    });

    it('never counts lower than a full read would, and exactly as it does while nothing is released and the clock only goes on (any payments, ties, releases, a clock stepped back)', () => {
      const step = fc.record({
        advanceMs: fc.oneof(
          { weight: 9, arbitrary: fc.integer({ min: 0, max: 40 }) },
          { weight: 1, arbitrary: fc.integer({ min: 0, max: 1_500 }) },
        ),
        payments: fc.integer({ min: 0, max: 12 }),
        release: fc.option(fc.nat(), { nil: undefined }),
        stepBackMs: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined, freq: 8 }),
      });
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 3 }),
          fc.array(step, { minLength: 40, maxLength: 160 }),
          fc.boolean(),
          fc.boolean(),
          (w, steps, releases, stepsBack) => {
            let nowMs = T0;
            // A window aged at a later reading is not given back its payments when the clock steps back: the
            // count is held to the database's at the latest reading.
            let latestMs = T0;
            const paid: number[] = [];
            let recent: VelocityWindow = { count: 0, oldest_us: [] };
            for (const s of steps) {
              nowMs += s.advanceMs - (stepsBack ? (s.stepBackMs ?? 0) : 0);
              const now = new Date(nowMs);
              latestMs = Math.max(latestMs, nowMs);
              if (releases && s.release !== undefined && paid.length > 0) paid.splice(s.release % paid.length, 1);
              let aged = ageVelocityWindow(recent, w, now);
              if (!aged) {
                const point = velocityReadPoint(recent, w, now);
                assert.ok(point, 'a window that cannot be aged can be read on');
                aged = velocityWindowReadOn(point, readOn(paid, point, w, now)) ?? fullRead(paid, w, now);
              }
              const truth = fullRead(paid, w, new Date(latestMs)).count;
              if (releases || stepsBack)
                assert.ok(aged.count >= truth, `counted ${aged.count}, ${truth} in the window`);
              else assert.equal(aged.count, truth);
              recent = aged;
              // Payments at one clock reading: several at the same millisecond.
              for (let i = 0; i < s.payments; i++) {
                paid.push(now.getTime() * 1000);
                recent = addToVelocityWindow(recent, now);
              }
            }
          },
        ),
        { numRuns: 400 },
      );
    });
  });

  it('ages and reads on from a start given in microseconds as from a window and a clock reading', () => {
    const recent = { count: 40, oldest_us: Array.from({ length: VELOCITY_TIMES_KEPT }, (_, i) => us(T0 + i)) };
    for (const ms of [1_000, 1_010, 1_031, 1_032, 5_000]) {
      const startUs = us(T0 + ms) - 1_000_000;
      assert.deepEqual(
        ageVelocityWindowFrom(recent, startUs),
        ageVelocityWindow(recent, 1, at(ms)) ?? { count: 40 - VELOCITY_TIMES_KEPT, oldest_us: [] },
      );
      assert.deepEqual(velocityReadPointFrom(recent, startUs), velocityReadPoint(recent, 1, at(ms)));
    }
  });

  it('spells a time in microseconds as PostgreSQL reads it, to the microsecond', () => {
    const base = Date.parse('2026-11-29T10:00:02Z') * 1000;
    assert.equal(timestampFromUs(base + 123_456), '2026-11-29T10:00:02.123456Z');
    assert.equal(timestampFromUs(base + 7), '2026-11-29T10:00:02.000007Z');
    assert.equal(timestampFromUs(base), '2026-11-29T10:00:02.000000Z');
  });
});

/**
 * A remembered velocity window is aged exactly: each known payment time that left the window takes one off
 * the count, never an unknown one; when none known is left while unknown ones remain, it must be read again.
 */
import assert from 'node:assert/strict';
import { addToVelocityWindow, ageVelocityWindow, VELOCITY_TIMES_KEPT } from '../../../src/api/pay/velocity-window.js';

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
});

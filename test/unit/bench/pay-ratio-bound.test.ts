/**
 * The bench's ceiling for payments beside the raw HSM rate: the machine's least CPU a payment is the floor's
 * hand-offs at saturation plus the HSM's own work plus the signer's required work, and the cores bound the rate;
 * a pay phase's parts are set beside the floor's same parts.
 */
import assert from 'node:assert/strict';
import { payRatioBound, payRatioBoundLine } from '../../../bench/support/pay-ratio-bound.js';

const signer = { rawMicros: 450, digestMicros: 25, finalizeMicros: 85, bound: 450 / 560 };
/** A floor of 640 µs of machine CPU a request: front 200, echo 60, PostgreSQL 150, load generator 130, the rest 100. */
const floor = { rate: 3000, front: 200, hop: 60, postgres: 150, load: 130, machine: 640 };

describe('bench payments ceiling', () => {
  it('adds the floor, the raw signature and the required work, and divides the cores by it', () => {
    const b = payRatioBound(floor, signer, 4000, 2);
    assert.equal(b.leastMachineMicros, 640 + 450 + 25 + 85);
    assert.equal(b.rate, 2e6 / 1200);
    assert.equal(b.bound, 2e6 / 1200 / 4000);
  });

  it('scales with the cores and falls as the floor grows', () => {
    const small = payRatioBound({ ...floor, machine: 400 }, signer, 4000, 2);
    const large = payRatioBound({ ...floor, machine: 900 }, signer, 4000, 2);
    assert.ok(small.bound > large.bound);
    assert.equal(payRatioBound(small.saturated, signer, 4000, 4).rate, small.rate * 2);
  });

  it('prints the bound beside each measured ratio', () => {
    const line = payRatioBoundLine(payRatioBound(floor, signer, 4000, 2), [
      ['(a)', 0.26],
      ['(b)', 0.31],
    ]);
    assert.match(line, /at least 1200 µs of machine CPU a payment, so at most 1667\/s, 0\.42× raw/);
    assert.match(line, /measured \(a\) 0\.26×, \(b\) 0\.31×$/);
  });

  it('sets each part of a payment beside the same part of the floor at its rate, the signer beside the echo, raw and required', () => {
    const paid = { front: 480, hop: 800, postgres: 330, load: 110, machine: 1750 };
    const atRate = { rate: 1000, front: 90, hop: 40, postgres: 60, load: 50, machine: 300 };
    const line = payRatioBoundLine(payRatioBound(floor, signer, 4000, 2), [['(a)', 0.26]], {
      label: '(a)',
      micros: paid,
      floor: atRate,
    });
    assert.match(line, /The floor at \(a\)'s rate \(1000\/s\), µs a request: front 90, echo 40, PostgreSQL 60/);
    // signer: 800 − 40 (echo) − 450 (raw) − 110 (required) = +200; machine: 1750 − 300 − 560 = +890
    assert.match(line, /the API \+390 over the front, the signer \+200 over the echo/);
    assert.match(line, /PostgreSQL \+270, the load generator \+60, the machine \+890$/);
  });
});

/** splitRevenueRange: whole UTC days from the per-day totals, the edges from the rows, nothing counted twice or left out. */
import assert from 'node:assert/strict';
import { splitRevenueRange } from '../../../src/api/sellers/ledger/split-revenue-range.js';

const d = (s: string) => new Date(s);

describe('splitRevenueRange', () => {
  it('open on both sides: every day from the totals, no rows', () => {
    assert.deepEqual(splitRevenueRange(undefined, undefined), { rows: [], days: { first: undefined, end: undefined } });
  });

  it('midnight bounds: whole days only', () => {
    assert.deepEqual(splitRevenueRange(d('2026-11-01T00:00:00Z'), d('2026-11-25T00:00:00Z')), {
      rows: [],
      days: { first: '2026-11-01', end: '2026-11-25' },
    });
  });

  it('bounds inside a day: the edges from the rows, the days between from the totals', () => {
    assert.deepEqual(splitRevenueRange(d('2026-11-01T13:00:00Z'), d('2026-11-25T00:00:00.001Z')), {
      rows: [
        { from: d('2026-11-01T13:00:00Z'), to: d('2026-11-02T00:00:00Z') },
        { from: d('2026-11-25T00:00:00Z'), to: d('2026-11-25T00:00:00.001Z') },
      ],
      days: { first: '2026-11-02', end: '2026-11-25' },
    });
  });

  it('one open side', () => {
    assert.deepEqual(splitRevenueRange(d('2026-11-01T13:00:00Z'), undefined), {
      rows: [{ from: d('2026-11-01T13:00:00Z'), to: d('2026-11-02T00:00:00Z') }],
      days: { first: '2026-11-02', end: undefined },
    });
    assert.deepEqual(splitRevenueRange(undefined, d('2026-11-25T06:00:00Z')), {
      rows: [{ from: d('2026-11-25T00:00:00Z'), to: d('2026-11-25T06:00:00Z') }],
      days: { first: undefined, end: '2026-11-25' },
    });
  });

  it('no whole day inside: the rows alone, over the whole range', () => {
    for (const [from, to] of [
      ['2026-11-01T13:00:00Z', '2026-11-02T12:00:00Z'],
      ['2026-11-01T13:00:00Z', '2026-11-01T14:00:00Z'],
      ['2026-11-02T00:00:00Z', '2026-11-01T00:00:00Z'],
    ] as const) {
      assert.deepEqual(splitRevenueRange(d(from), d(to)), { rows: [{ from: d(from), to: d(to) }] }, `${from} → ${to}`);
    }
  });

  it('exactly one whole day', () => {
    assert.deepEqual(splitRevenueRange(d('2026-11-01T00:00:00Z'), d('2026-11-02T00:00:00Z')), {
      rows: [],
      days: { first: '2026-11-01', end: '2026-11-02' },
    });
  });
});

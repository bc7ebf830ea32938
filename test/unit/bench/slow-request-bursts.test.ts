/**
 * The bench's burst view of a steady phase's tail: slow requests grouped by when they started, and the gap
 * between bursts that names a periodic cause.
 */
import assert from 'node:assert/strict';
import { slowRequestBursts } from '../../../bench/support/slow-request-bursts.js';

describe('bench slow-request bursts', () => {
  it('groups slow requests that started close together and gives the median gap between bursts', () => {
    const requests = [
      // a burst at 100–130 ms, one at 640 ms, one at 1,180–1,200 ms; fast requests in between are ignored
      { startMs: 100, latencyMs: 25 },
      { startMs: 130, latencyMs: 31 },
      { startMs: 120, latencyMs: 22 },
      { startMs: 400, latencyMs: 5 },
      { startMs: 640, latencyMs: 40 },
      { startMs: 900, latencyMs: 20 },
      { startMs: 1200, latencyMs: 21 },
      { startMs: 1180, latencyMs: 60 },
    ];
    const result = slowRequestBursts(requests, 20);
    assert.equal(result.slow, 6);
    assert.deepEqual(result.bursts, [
      { startMs: 100, endMs: 130, requests: 3 },
      { startMs: 640, endMs: 640, requests: 1 },
      { startMs: 1180, endMs: 1200, requests: 2 },
    ]);
    assert.equal(result.medianGapMs, 540);
  });

  it('joins a slow request to the burst before it only within the join distance of that burst’s last one', () => {
    const chain = [0, 90, 180, 270].map((startMs) => ({ startMs, latencyMs: 30 }));
    assert.equal(slowRequestBursts(chain, 20, 100).bursts.length, 1);
    assert.equal(slowRequestBursts(chain, 20, 80).bursts.length, 4);
  });

  it('has no gap to give with fewer than two bursts', () => {
    assert.ok(Number.isNaN(slowRequestBursts([{ startMs: 5, latencyMs: 50 }], 20).medianGapMs));
    assert.deepEqual(slowRequestBursts([{ startMs: 5, latencyMs: 10 }], 20), { slow: 0, bursts: [], medianGapMs: NaN });
  });
});

/**
 * The steady phase's slow bursts laid beside the processes' event-loop stalls, collections and PostgreSQL's
 * statements (bench/support/tail-timeline.ts), and the probe's file read back (loop-probe-slices.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { tailTimeline } from '../../../bench/support/tail-timeline.js';
import { readProbeSlices } from '../../../bench/support/loop-probe-slices.js';
import type { ProbeSlice } from '../../../bench/support/loop-probe.js';
import { fileTempDir } from '../../support/temp-dirs.js';

const T0 = 1_700_000_000_000;
const slice = (endMs: number, maxMs: number, gc: ProbeSlice['gc'] = []): ProbeSlice => ({
  at: T0 + endMs,
  maxMs,
  p99Ms: maxMs,
  gc,
  newSpaceMb: 2,
});

describe('bench tail timeline', () => {
  it('names the stall and the collection in each burst’s window, and each process’s collections per 1,000 requests', () => {
    const requests = [
      { startMs: 10, latencyMs: 3 },
      { startMs: 480, latencyMs: 35 },
      { startMs: 490, latencyMs: 28 },
      { startMs: 900, latencyMs: 4 },
    ];
    const api = [
      slice(100, 2),
      slice(200, 1),
      slice(500, 31, [{ kind: 'minor', at: T0 + 485, ms: 29 }]),
      slice(1000, 2),
    ];
    const signer = [slice(100, 1), slice(500, 3), slice(1000, 2)];
    const lines = tailTimeline({
      startedAtEpochMs: T0,
      requests,
      processes: [
        { name: 'api', slices: api },
        { name: 'signer', slices: signer },
      ],
      pg: [{ at: T0 + 495, waits: { 'IO:WalSync': 1, cpu: 2 }, oldestMs: { 'treasury-api': 12 } }],
      sliceMs: 100,
    });
    assert.equal(lines.length, 3);
    assert.match(
      lines[0]!,
      /^api: 4 slices, loop delay over 10 ms in 1, over 20 ms in 1; gc minor 1 \(250\.0 per 1,000/,
    );
    assert.match(lines[1]!, /^signer: 3 slices, loop delay over 10 ms in 0, over 20 ms in 0; gc none/);
    assert.match(
      lines[2]!,
      /^burst at 480–518 ms, 2 slow: api loop ≤31 ms, gc minor 29; signer loop ≤3 ms; pg oldest api 12 \(IO:WalSync×1\)$/,
    );
  });

  it('reads the probe’s lines back, skipping a line cut short, and none from a missing file', () => {
    const file = path.join(fileTempDir('treasury-probe-'), 'api.probe');
    fs.writeFileSync(file, `${JSON.stringify(slice(100, 1))}\n${JSON.stringify(slice(200, 5))}\n{"at":17`);
    assert.deepEqual(
      readProbeSlices(file).map((s) => s.maxMs),
      [1, 5],
    );
    assert.deepEqual(readProbeSlices(`${file}.none`), []);
  });
});

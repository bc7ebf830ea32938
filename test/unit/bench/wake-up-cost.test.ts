/**
 * The benchmark's hand-off baseline with real processes: it measures both modes (a finite machine
 * CPU time per round trip) and leaves nothing behind — no echo process, no socket directory.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { measureWakeUpCost } from '../../../bench/support/wake-up-cost.js';

const wakeDirs = () => fs.readdirSync(os.tmpdir()).filter((d) => d.startsWith('treasury-wake-'));
const echoProcesses = () =>
  fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('echo.sock');
      } catch {
        return false;
      }
    });

describe('bench hand-off baseline', () => {
  it('measures back-to-back and paced round trips between two processes, then stops the echo process and removes its socket', async () => {
    const dirsBefore = wakeDirs().length;
    const cost = await measureWakeUpCost(400, 0.5);
    for (const v of [cost.backToBackMicros, cost.pacedMicros])
      assert.ok(Number.isFinite(v) && v >= 0, `machine CPU per round trip: ${v}`);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(wakeDirs().length, dirsBefore);
    assert.deepEqual(echoProcesses(), []);
  });
});

/**
 * Reads what ./loop-probe.ts wrote in a service process: its slices, one JSON line each, in order. Kept apart
 * from the probe, which starts measuring when it is imported.
 *
 * Limits: a file that is missing (the process never started the probe) reads as no slices; a line cut short by
 * the process's exit is skipped.
 */
import fs from 'node:fs';
import type { ProbeSlice } from './loop-probe.js';

/** The probe's slice length unless LOOP_PROBE_SLICE_MS says otherwise, ms. */
export const PROBE_SLICE_MS = 100;

export function readProbeSlices(file: string): ProbeSlice[] {
  if (!fs.existsSync(file)) return [];
  const slices: ProbeSlice[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      slices.push(JSON.parse(line) as ProbeSlice);
    } catch {
      // the last line of a process that stopped while writing it
    }
  }
  return slices;
}

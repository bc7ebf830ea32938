/**
 * A probe `npm run bench` loads into the API with BENCH_HEAP_PROFILE_DIR (`--import <this file>`, the directory in
 * HEAP_PROBE_DIR): the first SIGUSR2 starts V8's sampling heap profiler — keeping the objects young and full
 * collections freed, so that the profile counts what was allocated, not what survived — and the second stops it
 * and writes `<pid>.heapprofile` there (Chrome DevTools reads it; ./summarise-heap-profile.ts sums it by site).
 * The bench sends the two signals around (a) and (b) (./profile-windows.ts).
 *
 * Why: what a payment allocates sets how often the young generation is collected, on the main thread and on V8's
 * helper threads; a CPU profile shows the collections, not who filled the heap. Limits: sampled (one sample every
 * HEAP_PROBE_INTERVAL bytes, default 4096), so a site's bytes are an estimate; loaded only by the benches.
 * HEAP_PROBE_SURVIVORS=1 leaves out the objects young collections freed: what is left is what the API promoted to its
 * old generation (and what still lives), the food of its full collections.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const dir = process.env.HEAP_PROBE_DIR;
const interval = Number(process.env.HEAP_PROBE_INTERVAL ?? 4096) || 4096;
/**
 * HEAP_PROBE_SURVIVORS=1: leave out what young collections freed, so the profile counts what was promoted (or still
 * lives).
 */
const survivorsOnly = process.env.HEAP_PROBE_SURVIVORS === '1';

function post<T>(session: inspector.Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

if (dir) {
  const session = new inspector.Session();
  session.connect();
  let sampling = false;
  process.on('SIGUSR2', () => {
    void (async () => {
      if (!sampling) {
        sampling = true;
        await post(session, 'HeapProfiler.enable');
        await post(session, 'HeapProfiler.startSampling', {
          samplingInterval: interval,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: !survivorsOnly,
        });
        return;
      }
      sampling = false;
      const { profile } = await post<{ profile: unknown }>(session, 'HeapProfiler.stopSampling');
      fs.writeFileSync(path.join(dir, `${process.pid}.heapprofile`), JSON.stringify(profile));
    })().catch((err: unknown) => process.stderr.write(`heap sampling probe: ${String(err)}\n`));
  });
}

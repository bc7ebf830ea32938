/**
 * A full collection of this process's heap, on demand (V8's `gc`, exposed at run time). The benches ask for one
 * between phases, never inside a measured one: the load generator's own full collection in the middle of a phase
 * stalls its event loop, and every response that arrives meanwhile is measured late — a tail that is the bench's,
 * not the service's (December 5: the steady phase's recurring burst 13 s into (c) was the load generator's).
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | undefined;

/** Runs a full collection; answers the heap's used bytes after it (what the process still holds). */
export function fullCollection(): number {
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
  return process.memoryUsage().heapUsed;
}

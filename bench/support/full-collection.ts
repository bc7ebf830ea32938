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

/**
 * Lets this process's old generation double between full collections (`--heap-growing-percent=100`, as the API
 * runs), for a load generator that must not collect inside a phase: after a collection asked for by
 * `fullCollection`, V8 otherwise sets the next one's threshold from its own collection speed, as little as 1.1×
 * what was left, and the load generator reached it inside a 30-s steady phase (December 6: 38 MB left, a full
 * collection 24 s later, in the middle of (c), with a 14.6-ms marking step, and a burst of slow requests around
 * it). Not for a process under measurement (the x402 bench's servers): it changes when that process collects.
 */
export function letOldGenerationDouble(): void {
  v8.setFlagsFromString('--heap-growing-percent=100');
}

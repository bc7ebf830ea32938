/**
 * The Node flags treasury-api and treasury-signer start with, wherever they are started: the container images
 * (Dockerfile `CMD`), `npm run start:api` / `start:signer`, the sandbox (./sandbox/sandbox-process.ts) and the
 * benches (bench/support/service-bench-parts.ts). test/unit/ops/node-flags.test.ts holds the Dockerfile and
 * package.json to these lists.
 *
 * `--min-semi-space-size=16 --max-semi-space-size=64`: V8's young generation starts at 16 MB a half (Node's
 * default starts at 1 MB and grows only while much of it survives, which a request's garbage seldom does) and
 * may grow to 64 (default 16). A payment allocates tens of kilobytes in each process and little of it outlives
 * the request, so at a few hundred payments a second each process ran a young-generation collection every
 * fraction of a second, holding every request in flight for its duration (docs/performance.md, "Steady
 * 400/s, the tail"). A larger young generation finds about as many survivors per collection, so the same work
 * is done in fewer, not longer, pauses. Costs: 32 MB of young generation per process from the start, up to
 * 3 × 64 MB under load.
 *
 * Does not: change any check, limit or durability setting; apply to the gate or the CLI (short-lived, or
 * a different workload).
 */
export const API_NODE_FLAGS: readonly string[] = Object.freeze([
  '--min-semi-space-size=16',
  '--max-semi-space-size=64',
]);
export const SIGNER_NODE_FLAGS: readonly string[] = Object.freeze([
  '--min-semi-space-size=16',
  '--max-semi-space-size=64',
]);

/** The start-up flags of the service whose entry point is `entry` (`signer/main.ts`, `src/api/main.ts`): none for another entry. */
export function nodeFlagsFor(entry: string): readonly string[] {
  if (entry === 'signer/main.ts') return SIGNER_NODE_FLAGS;
  if (entry === 'src/api/main.ts') return API_NODE_FLAGS;
  return [];
}

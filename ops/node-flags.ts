/**
 * The Node flags treasury-api and treasury-signer start with, wherever they are started: the container images
 * (Dockerfile `CMD`), `npm run start:api` / `start:signer`, the sandbox (./sandbox/sandbox-process.ts) and the
 * benches (bench/support/service-bench-parts.ts). test/unit/ops/node-flags.test.ts and
 * test/unit/ops/container-files.test.ts hold the npm scripts and the Dockerfile to these lists.
 *
 * `--min-semi-space-size=16 --max-semi-space-size=16`: V8's young generation is 16 MB a half from the start.
 * By default it starts at 1 MB and grows only while much of it survives, which a request's garbage seldom
 * does: at a steady 400 payments/s the signer stayed small and collected every ≈ 200 ms (12 collections per
 * 1,000 payments), the API every ≈ 330 ms (7.7), each collection holding every request in flight
 * (docs/performance.md, "Steady 400/s, the tail"). At 16 MB both collect 3–4 times per 1,000 payments. The
 * maximum stays at 16 (V8's own default on 64-bit): allowed to grow to 64, the API's young generation did,
 * and its collections took longer (docs/operations.md, "Node flags").
 * Costs: 32 MB of young generation per process from the start.
 *
 * Does not: change any check, limit or durability setting; apply to the gate or the CLI (short-lived, or
 * another workload).
 */
export const API_NODE_FLAGS: readonly string[] = Object.freeze([
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
]);
export const SIGNER_NODE_FLAGS: readonly string[] = Object.freeze([
  '--min-semi-space-size=16',
  '--max-semi-space-size=16',
]);

/** The start-up flags of the service whose entry point is `entry` (`signer/main.ts`, `src/api/main.ts`): none for another entry. */
export function nodeFlagsFor(entry: string): readonly string[] {
  if (entry === 'signer/main.ts') return SIGNER_NODE_FLAGS;
  if (entry === 'src/api/main.ts') return API_NODE_FLAGS;
  return [];
}

/**
 * The Node flags treasury-api and treasury-signer start with, wherever they are started: the container images
 * (Dockerfile `CMD`), `npm run start:api` / `start:signer`, the sandbox (./sandbox/sandbox-process.ts) and the
 * benches (bench/support/service-bench-parts.ts, bench/support/steady-tail.ts). test/unit/ops/node-flags.test.ts
 * and test/unit/ops/container-files.test.ts hold the npm scripts and the Dockerfile to these lists, so that a
 * bench measures the processes production runs.
 *
 * None: V8's defaults. Young-generation sizes were measured against them (docs/operations.md, "Node flags";
 * docs/performance.md, "Steady 400/s, the tail"): a larger one gives fewer but longer collection pauses and no
 * better steady-state tail; a smaller one a lower p99 but less throughput.
 *
 * Does not: apply to the gate or the CLI.
 */
export const API_NODE_FLAGS: readonly string[] = Object.freeze([]);
export const SIGNER_NODE_FLAGS: readonly string[] = Object.freeze([]);

/** The start-up flags of the service whose entry point is `entry` (`signer/main.ts`, `src/api/main.ts`): none for another entry. */
export function nodeFlagsFor(entry: string): readonly string[] {
  if (entry === 'signer/main.ts') return SIGNER_NODE_FLAGS;
  if (entry === 'src/api/main.ts') return API_NODE_FLAGS;
  return [];
}

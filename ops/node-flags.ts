/**
 * The Node flags treasury-api and treasury-signer start with, wherever they are started: the container images
 * (Dockerfile `CMD`), `npm run start:api` / `start:signer`, the sandbox (./sandbox/sandbox-process.ts) and the
 * benches (bench/support/service-bench-parts.ts, bench/support/steady-tail.ts). test/unit/ops/node-flags.test.ts
 * and test/unit/ops/container-files.test.ts hold the npm scripts and the Dockerfile to these lists, so that a
 * bench measures the processes production runs.
 *
 * The API: `--heap-growing-percent=100`, its old generation allowed to double what a full collection left before the
 * next full collection. V8 otherwise picks that headroom from its own collection speed and the rate the old
 * generation grows, aiming at throughput: the slower the API promotes, the smaller the headroom it picks (1.1–1.4×
 * the ≈ 48 MB live), so that at a steady 400 payments/s a full collection came every ≈ 5 s whatever the API
 * promoted, and the requests around each one waited for it — most of the steady phase's slow requests
 * (docs/performance.md, "What the API promotes, and when V8 collects it"). At 2× one comes about once a minute.
 * The signer: `--heap-growing-percent=100` too, since December 6 — with V8's own headroom it ran one full
 * collection in every 30-s phase at a steady 400 payments/s, its event loop held 10–19 ms and a burst of slow
 * requests around it; at 2×, none in four phases of four, and a lower p99 and fewer requests over 20 ms in each
 * of four alternated pairs (docs/performance.md, "The signer's old generation allowed to double"). And
 * `--min-semi-space-size=16`, its young generation 16 MB a half from the start — the size V8 grows the API's to
 * by itself. By default it starts at 1 MB and grows only while much of it survives, which a signature's garbage
 * does not: at a steady 400 payments/s the signer's stayed at 4 MB and collected 11–13 times per 1,000 payments
 * (every ≈ 200 ms), each collection holding every signature in flight; at 16 MB, 3 times, with less collection
 * time per payment in all (docs/performance.md, "Steady 400/s, the tail"). The maximum stays V8's (16 MB): a young
 * generation allowed to grow past it collected less often but for longer, with no better tail (docs/operations.md,
 * "Node flags").
 * Costs: the signer reserves 32 MB of young generation from the start; each service's old generation may hold up
 * to about twice its live data between full collections (the API ≈ 50 MB more than V8's own choice at the bench's
 * load, the signer ≈ 30 MB).
 *
 * Does not: apply to the gate or the CLI.
 */
export const API_NODE_FLAGS: readonly string[] = Object.freeze(['--heap-growing-percent=100']);
export const SIGNER_NODE_FLAGS: readonly string[] = Object.freeze([
  '--heap-growing-percent=100',
  '--min-semi-space-size=16',
]);

/** The start-up flags of the service whose entry point is `entry` (`signer/main.ts`, `src/api/main.ts`): none for another entry. */
export function nodeFlagsFor(entry: string): readonly string[] {
  if (entry === 'signer/main.ts') return SIGNER_NODE_FLAGS;
  if (entry === 'src/api/main.ts') return API_NODE_FLAGS;
  return [];
}

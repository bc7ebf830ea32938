/**
 * The load side of `bench/x402-middleware-bench.ts`: a closed loop over node:http keep-alive that stops early
 * when its operation reports the pre-signed payments exhausted, the requester it drives, and one plain GET
 * for set-up checks. Loopback only.
 *
 * Limits: latencies are wall time in the load generator's own event loop (they include its share of the
 * cores); no pacing (a closed loop: the next request goes as soon as one answers).
 */
import http from 'node:http';

export interface Result {
  ok: number;
  errors: number;
  seconds: number;
  latenciesMs: Float64Array;
  exhausted: boolean;
  firstError: string | undefined;
}

export type Outcome = { ok: true } | { ok: false; why: string } | 'exhausted';

export const rate = (r: Result): number => r.ok / r.seconds;

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `op` from `concurrency` loops for `seconds` (or until `op` reports the payments exhausted). */
export async function drive(concurrency: number, seconds: number, op: () => Promise<Outcome>): Promise<Result> {
  let latencies = new Float64Array(1 << 14);
  let n = 0;
  let ok = 0;
  let errors = 0;
  let exhausted = false;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const loop = async () => {
    while (!exhausted && performance.now() < deadline) {
      const t0 = performance.now();
      const outcome = await op();
      if (outcome === 'exhausted') {
        exhausted = true;
        break;
      }
      if (n === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[n++] = performance.now() - t0;
      if (outcome.ok) ok++;
      else {
        errors++;
        firstError ??= outcome.why;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  return {
    ok,
    errors,
    seconds: (performance.now() - started) / 1000,
    latenciesMs: latencies.slice(0, n).sort(),
    exhausted,
    firstError,
  };
}

/** Results of one variant's slices as one run: counts and seconds summed, latencies merged and sorted. */
export function addResults(total: Result | undefined, more: Result): Result {
  if (!total) return more;
  const latenciesMs = new Float64Array(total.latenciesMs.length + more.latenciesMs.length);
  latenciesMs.set(total.latenciesMs);
  latenciesMs.set(more.latenciesMs, total.latenciesMs.length);
  return {
    ok: total.ok + more.ok,
    errors: total.errors + more.errors,
    seconds: total.seconds + more.seconds,
    latenciesMs: latenciesMs.sort(),
    exhausted: total.exhausted || more.exhausted,
    firstError: total.firstError ?? more.firstError,
  };
}

export type Requester = (
  urlPath: string,
  headers: http.OutgoingHttpHeaders,
  expect: number,
  needReceipt: boolean,
) => Promise<Outcome>;

export function makeRequester(port: number, concurrency: number): Requester {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  return (urlPath, headers, expect, needReceipt) =>
    new Promise<Outcome>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: urlPath, agent, headers }, (res) => {
        res.resume();
        res.once('end', () => {
          if (res.statusCode !== expect) resolve({ ok: false, why: `HTTP ${res.statusCode} (wanted ${expect})` });
          else if (needReceipt && res.headers['payment-response'] === undefined)
            resolve({ ok: false, why: 'no PAYMENT-RESPONSE header' });
          else resolve({ ok: true });
        });
      });
      req.once('error', (err) => resolve({ ok: false, why: err.message }));
      req.end();
    });
}

/** One plain GET, for set-up checks: status, headers and body. */
export function getOnce(
  port: number,
  urlPath: string,
  headers: http.OutgoingHttpHeaders = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'GET', path: urlPath, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.once('error', reject);
    req.end();
  });
}

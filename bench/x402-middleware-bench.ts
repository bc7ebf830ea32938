/**
 * `npm run bench:x402`: throughput and latency of our Koa seller middleware (`x402Koa`, src/x402/koa) next to
 * the official `@x402/express` 2.27 `paymentMiddleware`, measured on the same machine in the same run.
 *
 * What runs: each server in its own child process on loopback (bench/support/x402-bench-servers.ts), so the
 * load generator never shares an event loop with what it measures and both sides are treated alike:
 *   (A) express 5 + `paymentMiddleware` + `x402ResourceServer` with the exact EVM server scheme;
 *   (B) Koa 3 + `x402Koa`;
 * both pricing `GET /paid` at 10000 atomic USDC ($0.01) on eip155:84532 to the same payTo, returning the same
 * small JSON body. The facilitator is a stub answering at once, inside each server process: an object with
 * verify/settle/getSupported for (A), and the same for (B) through its `facilitator` option.
 * (B) also needs the Treasury platform (`/v1/auth/verify` for the seller, `/v1/ledger` after each settlement):
 * that is a stub in a third child process, reached over HTTP (or answered in-process: BENCH_PLATFORM=inproc).
 *
 * Cases, each with a 2 s warm-up then the timed phase, `BENCH_CONCURRENCY` loops over node:http keep-alive:
 *   - 402 path:  GET /paid without payment, must be 402;
 *   - paid path: GET /paid with a valid `PAYMENT-SIGNATURE`, must be 200 with `PAYMENT-RESPONSE`. Payments are
 *     EIP-3009 authorizations signed up front (viem), each with a fresh nonce, wrapped once per server around
 *     the exact requirement that server advertised in its 402 `PAYMENT-REQUIRED` header; each is used once
 *     per server (our middleware refuses a reused one). If they run out, the phase ends early (noted);
 *   - paid path, diagnostic (with BENCH_PLATFORM=http): the same against a second x402Koa process whose platform
 *     calls are answered in-process as well, to show what the per-payment ledger report over HTTP costs;
 *   - free route (context): GET /free, not priced, through each middleware, must be 200;
 *   - paid path through the gate (`gate` case; `npm run bench:gate` runs `paid,gate`): treasury-gate
 *     (src/gate/) in its own child process, in front of an origin with no payment code (a third child), the
 *     same in-process facilitator object and stub platform; its row's ratio is against x402Koa's paid row of
 *     the same run (the gate adds one proxied HTTP hop to an origin per request; x402Koa runs its handler
 *     in-process).
 * Reported per case: requests/s, p50/p99 latency, errors, server CPU time per request (from the child's
 * process.cpuUsage over the timed phase, so independent of the load generator's share of the cores), and for
 * our rows the ratio against @x402/express (goal ≥ 1.2× on the 402 path, ≥ 1.5× on the paid path; the gate ≥ 0.8× of
 * x402Koa's paid rate). Progress goes to
 * stderr, the markdown table to stdout. Exits non-zero only on a crash, never on a missed target.
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 32), BENCH_PAYMENTS (payments to sign,
 * default 50000), BENCH_SIGN_SECONDS (signing time box, default 45), BENCH_PLATFORM (`http` default, or
 * `inproc`), BENCH_CODE (`dist` or `sources`: our code compiled or through tsx; default the build when current),
 * BENCH_CASES (comma list of `402`, `paid`, `free`, `gate`; default all), BENCH_CPU_PROFILE_DIR (run the
 * server children with --cpu-prof into <dir>/express, <dir>/koa and <dir>/koa-inproc; the largest profile in
 * each is the main thread — summarise it with bench/support/summarise-cpu-profile.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildIsCurrent } from '../bin/build-freshness.mjs';
import { BENCH_NETWORK, BENCH_PAY_TO, BENCH_USDC, type ServerStats } from './support/x402-bench-servers.js';
import { signTransferAuthorizations, type SignedAuthorization } from './support/sign-transfer-authorizations.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? 50_000);
const SIGN_SECONDS = Number(process.env.BENCH_SIGN_SECONDS ?? 45);
const PLATFORM_MODE = process.env.BENCH_PLATFORM === 'inproc' ? 'inproc' : 'http';
const CASES = new Set((process.env.BENCH_CASES ?? '402,paid,free,gate').split(',').map((c) => c.trim()));
/**
 * Our code as production runs it: the compiled build (dist/, `npm run build`) when it is current (newer than
 * every source it is built from: bin/build-freshness.mjs), else the TypeScript sources through tsx, whose
 * transform adds a property definition to every function created at run time (bench/support/x402-bench-servers.ts);
 * BENCH_CODE=dist|sources forces one. @x402/express is compiled JavaScript either way.
 */
const CODE: 'dist' | 'sources' =
  process.env.BENCH_CODE === 'dist' || process.env.BENCH_CODE === 'sources'
    ? process.env.BENCH_CODE
    : ['dist/src/x402/koa/index.js', 'dist/src/gate/gate-app.js'].every((f) =>
          buildIsCurrent(f, ['src', 'policy', 'base']),
        )
      ? 'dist'
      : 'sources';
const WARMUP_SECONDS = 2;
/**
 * The goals (docs/performance.md, "The seller's paid path"): the 402 path 1.2× and the paid path 1.5× the rate of
 * @x402/express; the gate 0.8× of x402Koa's paid rate.
 */
const TARGET = { '402': 1.2, paid: 1.5, gate: 0.8 } as const;

const log = (line: string) => process.stderr.write(`• ${line}\n`);

// ---------------------------------------------------------------------------------------------------------
// Server children

interface ServerChild {
  name: string;
  port: number;
  child: ChildProcess;
  stats(): Promise<ServerStats>;
}

function startServer(
  role: 'express' | 'koa' | 'platform' | 'origin' | 'gate',
  env: NodeJS.ProcessEnv,
  profileName: string = role,
): Promise<ServerChild> {
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR;
  const execArgv = [
    '--import',
    'tsx',
    ...(profileDir && role !== 'platform' && role !== 'origin'
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, profileName)}`]
      : []),
  ];
  const child = fork(path.join(HERE, 'support/x402-bench-servers.ts'), [role], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} server not ready after 60 s`)), 60_000);
    child.once('exit', (code, signal) =>
      reject(new Error(`${role} server exited (${code ?? signal}) before it was ready`)),
    );
    child.on('message', function onReady(msg: { type?: string; port?: number }) {
      if (msg?.type !== 'ready') return;
      clearTimeout(timer);
      child.off('message', onReady);
      let queue = Promise.resolve() as Promise<unknown>;
      const stats = () => {
        const next = queue.then(
          () =>
            new Promise<ServerStats>((res, rej) => {
              const t = setTimeout(() => rej(new Error(`${role} server did not answer a stats request`)), 5_000);
              child.once('message', (m: ServerStats) => {
                clearTimeout(t);
                res(m);
              });
              child.send({ type: 'stats' });
            }),
        );
        queue = next.catch(() => undefined);
        return next;
      };
      resolve({ name: role, port: msg.port!, child, stats });
    });
  });
}

async function stopServer(server: ServerChild): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  // Disconnecting makes the child exit normally, so a --cpu-prof profile gets written.
  server.child.disconnect();
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// ---------------------------------------------------------------------------------------------------------
// Load generator

interface Result {
  ok: number;
  errors: number;
  seconds: number;
  latenciesMs: Float64Array;
  exhausted: boolean;
  firstError: string | undefined;
}

type Outcome = { ok: true } | { ok: false; why: string } | 'exhausted';

const rate = (r: Result) => r.ok / r.seconds;
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs `op` from `concurrency` loops for `seconds` (or until `op` reports the payments exhausted). */
async function drive(concurrency: number, seconds: number, op: () => Promise<Outcome>): Promise<Result> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  let ok = 0;
  let errors = 0;
  let exhausted = false;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
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
    }),
  );
  return {
    ok,
    errors,
    seconds: (performance.now() - started) / 1000,
    latenciesMs: latencies.slice(0, n).sort(),
    exhausted,
    firstError,
  };
}

function makeRequester(port: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  return (urlPath: string, headers: http.OutgoingHttpHeaders, expect: number, needReceipt: boolean) =>
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
function getOnce(
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

// ---------------------------------------------------------------------------------------------------------
// Payments

interface Challenge {
  x402Version: number;
  resource?: { url: string; description?: string; mimeType?: string };
  accepts: Array<{
    scheme: string;
    network: string;
    amount: string;
    asset: string;
    payTo: string;
    maxTimeoutSeconds: number;
    extra?: { name?: string; version?: string };
  }>;
}

async function readChallenge(server: ServerChild, paidPath = '/paid'): Promise<Challenge> {
  const res = await getOnce(server.port, paidPath);
  const header = res.headers['payment-required'];
  if (res.status !== 402 || typeof header !== 'string')
    throw new Error(
      `${server.name}: GET /paid without payment gave HTTP ${res.status} without a PAYMENT-REQUIRED header: ${String(res.body).slice(0, 300)}`,
    );
  const challenge = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as Challenge;
  const exact = challenge.accepts.find((a) => a.scheme === 'exact' && a.network === BENCH_NETWORK);
  if (!exact) throw new Error(`${server.name}: no exact ${BENCH_NETWORK} requirement in ${JSON.stringify(challenge)}`);
  return { ...challenge, accepts: [exact] };
}

/** The `PAYMENT-SIGNATURE` value for `auth`, echoing the server's own requirement as `accepted`. */
function paymentHeader(challenge: Challenge, auth: SignedAuthorization): string {
  const { signature, ...authorization } = auth;
  const payload = {
    x402Version: 2,
    resource: challenge.resource,
    accepted: challenge.accepts[0],
    payload: { signature, authorization },
  };
  return Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
}

function sameTerms(a: Challenge['accepts'][0], b: Challenge['accepts'][0]): string | undefined {
  const problems: string[] = [];
  if (a.amount !== b.amount) problems.push(`amount ${a.amount} vs ${b.amount}`);
  if (a.asset.toLowerCase() !== b.asset.toLowerCase()) problems.push(`asset ${a.asset} vs ${b.asset}`);
  if (a.payTo.toLowerCase() !== b.payTo.toLowerCase()) problems.push(`payTo ${a.payTo} vs ${b.payTo}`);
  if (a.network !== b.network) problems.push(`network ${a.network} vs ${b.network}`);
  if (a.maxTimeoutSeconds !== b.maxTimeoutSeconds)
    problems.push(`maxTimeoutSeconds ${a.maxTimeoutSeconds} vs ${b.maxTimeoutSeconds}`);
  if (a.extra?.name !== b.extra?.name || a.extra?.version !== b.extra?.version)
    problems.push('EIP-712 domain name/version differ');
  return problems.length ? problems.join('; ') : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Cases

interface CaseResult {
  label: string;
  server: ServerChild;
  result: Result;
  cpuUsPerRequest: number;
}

async function runCase(
  label: string,
  server: ServerChild,
  op: () => Promise<Outcome>,
  warmOp: () => Promise<Outcome> = op,
): Promise<CaseResult> {
  log(`${label}: warm-up ${WARMUP_SECONDS} s`);
  await drive(CONCURRENCY, WARMUP_SECONDS, warmOp);
  log(`${label}: ${CONCURRENCY} concurrent, ${SECONDS} s`);
  const before = await server.stats();
  const result = await drive(CONCURRENCY, SECONDS, op);
  const after = await server.stats();
  const cpuUs = after.cpuUserUs + after.cpuSystemUs - (before.cpuUserUs + before.cpuSystemUs);
  const requests = result.ok + result.errors;
  if (result.errors > 0) log(`${label}: ${result.errors} errors, first: ${result.firstError}`);
  if (result.exhausted)
    log(`${label}: pre-signed payments ran out after ${result.seconds.toFixed(1)} s; the phase ended early`);
  return { label, server, result, cpuUsPerRequest: requests > 0 ? cpuUs / requests : NaN };
}

const byLabelPaid = (results: CaseResult[]) => results.some((r) => r.label === 'paid path: x402Koa (ours)');

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const buyerKey = generatePrivateKey();
  const buyer = privateKeyToAccount(buyerKey);
  const servers: ServerChild[] = [];
  try {
    log(`our code: ${CODE === 'dist' ? 'compiled (dist/)' : 'TypeScript sources through tsx'}`);
    log(
      `starting the stub platform, @x402/express and x402Koa servers (platform reached ${PLATFORM_MODE === 'http' ? 'over HTTP' : 'in-process'})`,
    );
    const platform = await startServer('platform', {});
    servers.push(platform);
    const childEnv = {
      BENCH_PAYER: buyer.address,
      BENCH_PLATFORM_URL: `http://127.0.0.1:${platform.port}`,
      BENCH_PLATFORM: PLATFORM_MODE,
      BENCH_CODE: CODE,
    };
    // With the platform over HTTP, a second x402Koa server answers the platform in-process too: the difference
    // between the two is what the per-payment ledger report over HTTP costs the seller's process.
    const diagnostic = PLATFORM_MODE === 'http' && CASES.has('paid');
    const [official, ours, oursInproc] = await Promise.all([
      startServer('express', childEnv),
      startServer('koa', childEnv),
      diagnostic ? startServer('koa', { ...childEnv, BENCH_PLATFORM: 'inproc' }, 'koa-inproc') : undefined,
    ]);
    servers.push(official!, ours!, ...(oursInproc ? [oursInproc] : []));
    if (oursInproc) oursInproc.name = 'koa (platform in-process)';
    // The gate: an origin with no payment code, and treasury-gate in front of it (seller `bench`, path prefix).
    const GATE_PAID = '/bench/paid';
    let gate: ServerChild | undefined;
    if (CASES.has('gate')) {
      const origin = await startServer('origin', {});
      servers.push(origin);
      gate = await startServer('gate', { ...childEnv, BENCH_ORIGIN_URL: `http://127.0.0.1:${origin.port}` });
      servers.push(gate);
    }
    const startStats = new Map<ServerChild, ServerStats>();
    for (const s of servers) startStats.set(s, await s.stats());

    const officialChallenge = await readChallenge(official!);
    const ourChallenge = await readChallenge(ours!);
    const inprocChallenge = oursInproc ? await readChallenge(oursInproc) : undefined;
    const gateChallenge = gate ? await readChallenge(gate, GATE_PAID) : undefined;
    const mismatch = sameTerms(officialChallenge.accepts[0]!, ourChallenge.accepts[0]!);
    if (mismatch) throw new Error(`the two servers advertise different terms: ${mismatch}`);
    const gateMismatch = gateChallenge && sameTerms(gateChallenge.accepts[0]!, ourChallenge.accepts[0]!);
    if (gateMismatch) throw new Error(`the gate and x402Koa advertise different terms: ${gateMismatch}`);
    const terms = ourChallenge.accepts[0]!;
    if (
      terms.payTo.toLowerCase() !== BENCH_PAY_TO.toLowerCase() ||
      terms.asset.toLowerCase() !== BENCH_USDC.toLowerCase() ||
      terms.amount !== '10000'
    ) {
      throw new Error(`unexpected terms ${JSON.stringify(terms)}`);
    }

    const threads = Math.max(1, Math.min(os.cpus().length, 4));
    log(`signing up to ${PAYMENTS} EIP-3009 authorizations on ${threads} threads (time box ${SIGN_SECONDS} s)`);
    const signStarted = performance.now();
    const authorizations = await signTransferAuthorizations(
      {
        privateKey: buyerKey,
        to: terms.payTo as `0x${string}`,
        value: terms.amount,
        asset: terms.asset as `0x${string}`,
        chainId: Number(BENCH_NETWORK.split(':')[1]),
        name: terms.extra!.name!,
        version: terms.extra!.version!,
        validSeconds: terms.maxTimeoutSeconds,
        count: PAYMENTS,
        seconds: SIGN_SECONDS,
      },
      threads,
    );
    const signSeconds = (performance.now() - signStarted) / 1000;
    log(`signed ${authorizations.length} in ${signSeconds.toFixed(1)} s`);
    // The same authorization is wrapped once per server (each server's own `accepted`); the servers are separate
    // processes, so each sees every authorization at most once.
    const officialPayments = authorizations.map((a) => paymentHeader(officialChallenge, a));
    const ourPayments = authorizations.map((a) => paymentHeader(ourChallenge, a));
    const inprocPayments = inprocChallenge ? authorizations.map((a) => paymentHeader(inprocChallenge, a)) : [];
    const gatePayments = gateChallenge ? authorizations.map((a) => paymentHeader(gateChallenge, a)) : [];

    const checks: Array<[ServerChild, string[]]> = [
      [official!, officialPayments],
      [ours!, ourPayments],
    ];
    if (oursInproc) checks.push([oursInproc, inprocPayments]);
    if (gate) checks.push([gate, gatePayments]);
    for (const [server, payments] of checks) {
      const paidPath = server === gate ? GATE_PAID : '/paid';
      const res = await getOnce(server.port, paidPath, { 'payment-signature': payments[0]! });
      if (res.status !== 200 || res.headers['payment-response'] === undefined)
        throw new Error(`${server.name}: a valid payment gave HTTP ${res.status} ${res.body.slice(0, 300)}`);
      if (server !== official) {
        const again = await getOnce(server.port, paidPath, { 'payment-signature': payments[0]! });
        if (again.status !== 402)
          throw new Error(`${server.name}: a reused payment gave HTTP ${again.status}, expected 402 (replay guard)`);
      }
    }
    log(
      'set-up checks passed: both servers 402 without payment, 200 with a receipt for a valid one; ours refuses a reused one',
    );

    const officialGet = makeRequester(official!.port);
    const ourGet = makeRequester(ours!.port);
    // The paid warm-up may use at most a fifth of the payments; the timed phase gets the rest.
    const paidOps = (get: ReturnType<typeof makeRequester>, payments: string[], paidPath = '/paid') => {
      let next = 1; // payments[0] was used by the set-up check
      const warmUpLimit = Math.floor(payments.length / 5);
      const op = (limit: number) => (): Promise<Outcome> => {
        if (next >= limit) return Promise.resolve('exhausted');
        return get(paidPath, { 'payment-signature': payments[next++]! }, 200, true);
      };
      return [op(payments.length), op(warmUpLimit)] as const;
    };

    const results: CaseResult[] = [];
    if (CASES.has('402')) {
      results.push(await runCase('402 path: @x402/express', official!, () => officialGet('/paid', {}, 402, false)));
      results.push(await runCase('402 path: x402Koa (ours)', ours!, () => ourGet('/paid', {}, 402, false)));
    }
    if (CASES.has('paid')) {
      results.push(await runCase('paid path: @x402/express', official!, ...paidOps(officialGet, officialPayments)));
      results.push(await runCase('paid path: x402Koa (ours)', ours!, ...paidOps(ourGet, ourPayments)));
      if (oursInproc)
        results.push(
          await runCase(
            'paid, ledger in-process (diag.)',
            oursInproc,
            ...paidOps(makeRequester(oursInproc.port), inprocPayments),
          ),
        );
    }
    if (gate) {
      if (!byLabelPaid(results))
        results.push(await runCase('paid path: x402Koa (ours)', ours!, ...paidOps(ourGet, ourPayments)));
      results.push(
        await runCase('paid path: gate (ours)', gate, ...paidOps(makeRequester(gate.port), gatePayments, GATE_PAID)),
      );
    }
    if (CASES.has('free')) {
      results.push(await runCase('free route: @x402/express', official!, () => officialGet('/free', {}, 200, false)));
      results.push(await runCase('free route: x402Koa (ours)', ours!, () => ourGet('/free', {}, 200, false)));
    }

    const finalStats = new Map<ServerChild, ServerStats>();
    for (const s of servers) finalStats.set(s, await s.stats());
    const loadAfter = os.loadavg();

    const byLabel = new Map(results.map((r) => [r.label, r]));
    const fmtCounts = (c: Record<string, number> | undefined) =>
      c && Object.keys(c).length
        ? Object.entries(c)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')
        : 'none';
    const ratioCell = (r: CaseResult): string => {
      if (r.server === official) return '—';
      if (r.server === gate) {
        const koa = byLabel.get('paid path: x402Koa (ours)')!;
        const ratio = rate(r.result) / rate(koa.result);
        const cpuRatio = koa.cpuUsPerRequest / r.cpuUsPerRequest;
        if (!Number.isFinite(ratio)) return 'n/a (no successful requests on one side)';
        return `${ratio.toFixed(2)}× of x402Koa's paid rate (CPU ${cpuRatio.toFixed(2)}×), goal ≥ ${TARGET.gate}×: ${ratio >= TARGET.gate ? 'met' : 'MISSED'}`;
      }
      const base =
        r.server === oursInproc
          ? byLabel.get('paid path: @x402/express')
          : byLabel.get(r.label.replace('x402Koa (ours)', '@x402/express'));
      if (!base) return '— (no @x402/express row in this run)';
      const ratio = rate(r.result) / rate(base.result);
      const cpuRatio = base.cpuUsPerRequest / r.cpuUsPerRequest;
      if (!Number.isFinite(ratio) || !Number.isFinite(cpuRatio)) return 'n/a (no successful requests on one side)';
      const goal = r.label.startsWith('402') ? TARGET['402'] : TARGET.paid;
      const target =
        r.label.startsWith('free') || r.server === oursInproc
          ? '(context, no target)'
          : `goal ≥ ${goal}×: ${ratio >= goal ? 'met' : 'MISSED'}`;
      return `${ratio.toFixed(2)}× (CPU ${cpuRatio.toFixed(2)}×), ${target}`;
    };
    const cols = [31, 10, 8, 8, 7, 12, 72];
    const cell = (s: string, i: number, right = true) => ` ${right ? s.padStart(cols[i]!) : s.padEnd(cols[i]!)} `;
    const header = ['case', 'requests/s', 'p50 ms', 'p99 ms', 'errors', 'CPU µs/req', 'ratio vs @x402/express'];
    const row = (r: CaseResult) =>
      '|' +
      [
        cell(r.label, 0, false),
        cell(rate(r.result).toFixed(0), 1),
        cell(percentile(r.result.latenciesMs, 50).toFixed(2), 2),
        cell(percentile(r.result.latenciesMs, 99).toFixed(2), 3),
        cell(String(r.result.errors), 4),
        cell(r.cpuUsPerRequest.toFixed(0), 5),
        cell(ratioCell(r), 6, false),
      ].join('|') +
      '|';
    const mb = (s: ServerChild) =>
      `${((startStats.get(s)?.rss ?? NaN) / 1024 / 1024).toFixed(0)} → ${((finalStats.get(s)?.rss ?? NaN) / 1024 / 1024).toFixed(0)} MB`;
    const early = results
      .filter((r) => r.result.exhausted)
      .map((r) => `${r.label} ran ${r.result.seconds.toFixed(1)} s (payments ran out)`);
    const platformStats = finalStats.get(platform);
    const lines = [
      '',
      `x402 seller middleware benchmark — ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
      `our code: ${CODE === 'dist' ? 'the compiled build (dist/)' : 'the TypeScript sources through tsx (no current build: `npm run build` for the compiled code production runs)'}`,
      `load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}; ${CONCURRENCY} concurrent keep-alive connections, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s per case`,
      '',
      '|' + header.map((h, i) => cell(h, i, i === 0 || i === 6)).join('|') + '|',
      '|' + cols.map((w) => '-'.repeat(w + 2)).join('|') + '|',
      ...results.map(row),
      '',
      `- ratio: our requests/s ÷ @x402/express requests/s in this run; "CPU" is @x402/express server CPU per request ÷ ours (higher is better for us). CPU µs/req is the server child's user+system CPU over the timed phase ÷ requests.`,
      `- servers: each in its own child process on 127.0.0.1; express 5.x with ETag and X-Powered-By off (Koa sends neither); Koa 3.x with x402Koa and a one-line handler. Same price (10000 atomic USDC = $0.01), payTo, network ${BENCH_NETWORK}.`,
      `- facilitator: stubbed, answers verify {isValid:true} and settle {success:true} at once, in each server process — the same kind of object passed to x402ResourceServer for @x402/express and as the \`facilitator\` option of x402Koa.`,
      `- platform: stubbed (/v1/auth/verify → one endpoint, /v1/ledger → 201), ${PLATFORM_MODE === 'http' ? 'in its own child process, reached by x402Koa over HTTP with global fetch (every settled payment reported, in the background, batched on /v1/ledger/batch)' : 'answered in-process by the same injected fetch'}; ledger rows received: ${platformStats?.ledgerReports ?? 'n/a (in-process)'}${platformStats?.ledgerCalls !== undefined ? ` in ${platformStats.ledgerCalls} calls` : ''}${PLATFORM_MODE === 'http' ? ` over ${platformStats?.connections} TCP connections, stub platform CPU ${((platformStats!.cpuUserUs + platformStats!.cpuSystemUs) / 1e6).toFixed(1)} s` : ''}. @x402/express has no ledger.${oursInproc ? ' The "ledger in-process (diag.)" row is a second x402Koa process whose injected fetch also answers the platform without a socket: same middleware, no HTTP ledger traffic.' : ''}`,
      `- payments: ${authorizations.length} EIP-3009 authorizations signed up front with viem in ${signSeconds.toFixed(1)} s (fresh nonce each), each wrapped around the requirement the server itself advertised and used at most once per server.${early.length ? ' ' + early.join('; ') + '.' : ''}`,
      ...(gate
        ? [
            `- gate: treasury-gate in its own child process, seller \`bench\` by path prefix (${GATE_PAID}), proxying each paid request over a keep-alive HTTP connection to an origin with no payment code (a third child process) and holding its body until settlement; same facilitator object, ledger batched to the stub platform's /v1/gate/ledger/batch. Its ratio is its paid requests/s ÷ x402Koa's paid requests/s in this run (the Koa handler runs in-process: no proxy hop). Counters: requests ${fmtCounts(finalStats.get(gate)?.outcomes)}; ledger reports ${fmtCounts(finalStats.get(gate)?.ledgerOutcomes)}; RSS ${mb(gate)}.`,
          ]
        : []),
      `- x402Koa's own counters at the end (whole run): ${[ours!, ...(oursInproc ? [oursInproc] : [])].map((s) => `${s.name}: requests ${fmtCounts(finalStats.get(s)?.outcomes)}; ledger reports ${fmtCounts(finalStats.get(s)?.ledgerOutcomes)}`).join(' — ')}.`,
      `- RSS after start → at the end: @x402/express ${mb(official!)}, x402Koa ${mb(ours!)}${oursInproc ? `, x402Koa (platform in-process) ${mb(oursInproc)}` : ''}, stub platform ${mb(platform)}.`,
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.all(servers.map(stopServer));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

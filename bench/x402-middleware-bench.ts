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
 * Cases, `BENCH_CONCURRENCY` loops over node:http keep-alive. The variants of a group are compared in one
 * alternation (bench/support/x402-alternating-slices.ts): each gets a 2 s warm-up, then they take turns in
 * one-second slices (BENCH_SLICE_SECONDS), BENCH_SECONDS slices each, the order reversed every other round, so
 * that the machine's drift within a run (its speed moved by half between runs and within them) hits every side
 * alike; each server's CPU is read at every slice boundary. Groups: 402 (@x402/express, x402Koa); paid and gate
 * together (@x402/express, x402Koa, the diagnostic, the gate: every paid ratio from one stretch); free.
 *   - 402 path:  GET /paid without payment, must be 402;
 *   - paid path: GET /paid with a valid `PAYMENT-SIGNATURE`, must be 200 with `PAYMENT-RESPONSE`. Payments are
 *     EIP-3009 authorizations signed up front (viem's typed-data hash, libsecp256k1's signature), each with a
 *     fresh nonce, wrapped once per server around the exact requirement that server advertised in its 402
 *     `PAYMENT-REQUIRED` header; each is used once per server (our middleware refuses a reused one). If they run
 *     out, the alternation ends early (noted);
 *   - paid path, diagnostic (with BENCH_PLATFORM=http): the same against a second x402Koa process whose platform
 *     calls are answered in-process as well, to show what the per-payment ledger report over HTTP costs;
 *   - free route (context): GET /free, not priced, through each middleware, must be 200;
 *   - paid path through the gate (`gate` case; `npm run bench:gate` runs `paid,gate`): treasury-gate
 *     (src/gate/) in its own child process, in front of an origin with no payment code (a third child), the
 *     same in-process facilitator object and stub platform; its row's ratio is against x402Koa's paid row of
 *     the same run (the gate adds one proxied HTTP hop to an origin per request; x402Koa runs its handler
 *     in-process).
 * Reported per case: requests/s, p50/p99 latency, errors, server CPU time per request (from the child's
 * process.cpuUsage over the alternated stretch, so independent of the load generator's share of the cores) and
 * its range over the variant's slices, per-slice medians of what moves it (context switches per request, the
 * load generator's own CPU per request, the machine's busy share outside the bench, steal), and for
 * our rows the ratio against @x402/express (goal ≥ 1.2× on the 402 path, ≥ 1.5× on the paid path; the gate ≥ 0.8× of
 * x402Koa's paid rate). Progress goes to
 * stderr, the markdown table to stdout. Exits non-zero only on a crash, never on a missed target.
 *
 * Options (env): BENCH_SECONDS (timed seconds per variant, default 8), BENCH_SLICE_SECONDS (default 1; equal to
 * BENCH_SECONDS gives one phase per variant, one after the other, as this bench ran before), BENCH_CONCURRENCY
 * (default 32), BENCH_PAYMENTS (payments to sign; default enough for 10,000 requests a second through the warm-up
 * and the timed slices: 100,000 at the defaults), BENCH_SIGN_SECONDS (signing time box, default 45),
 * BENCH_PLATFORM (`http` default, or `inproc`), BENCH_FACILITATOR (`inproc` default, or `http`: a stub facilitator
 * in its own child process, asked over HTTP by every server), BENCH_OUR_FETCH (`global`: x402Koa and the gate call
 * out through the global `fetch` instead of their own transport, to measure what it saves), BENCH_CODE (`dist` or `sources`: our code compiled or through tsx; default the build when current),
 * BENCH_CASES (comma list of `402`, `paid`, `free`, `gate`; default all), BENCH_CPU_PROFILE_DIR (run the
 * server children with --cpu-prof into <dir>/express, <dir>/koa, <dir>/koa-inproc and <dir>/gate; the largest profile in
 * each is the main thread — summarise it with bench/support/summarise-cpu-profile.ts).
 */
import os from 'node:os';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildIsCurrent } from '../bin/build-freshness.mjs';
import { runAlternated, type SliceRecord, type SliceVariant } from './support/x402-alternating-slices.js';
import { startServer, stopServer, type ServerChild } from './support/x402-bench-children.js';
import { drive, getOnce, makeRequester, type Outcome } from './support/x402-bench-load.js';
import { paidOps, paymentHeader, readChallenge, sameTerms, type Challenge } from './support/x402-bench-payments.js';
import { reportTable, sliceDiagnostics, TARGET, type ReportRow } from './support/x402-bench-report.js';
import { BENCH_NETWORK, BENCH_PAY_TO, BENCH_USDC, type ServerStats } from './support/x402-bench-servers.js';
import { signTransferAuthorizations, type SignedAuthorization } from './support/sign-transfer-authorizations.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** One slice's length, 0.25–60 s (anything else reads as 1). */
const SLICE_SECONDS = ((s) => (s >= 0.25 && s <= 60 ? s : 1))(Number(process.env.BENCH_SLICE_SECONDS ?? 1));
const ROUNDS = Math.max(1, Math.ceil(SECONDS / SLICE_SECONDS));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/**
 * Requests a second no server here has reached (the fastest variant ran under 7,000): the default signs enough
 * for a server at that rate through its warm-up and every timed slice, so that no alternation ends early.
 */
const FASTEST_RATE = 10_000;
const PAYMENTS = Number(process.env.BENCH_PAYMENTS ?? (ROUNDS * SLICE_SECONDS + 2) * FASTEST_RATE);
const SIGN_SECONDS = Number(process.env.BENCH_SIGN_SECONDS ?? 45);
const PLATFORM_MODE = process.env.BENCH_PLATFORM === 'inproc' ? 'inproc' : 'http';
/**
 * `inproc` (default): every payment server's facilitator is an object in its own process, answering at once.
 * `http`: a stub facilitator in its own child process, asked over HTTP by each server as a seller's deployment
 * asks a real one (two calls a paid request: verify, settle) — @x402/express through @x402/core's
 * `HTTPFacilitatorClient`, x402Koa and the gate through their own transport.
 */
const FACILITATOR_MODE = process.env.BENCH_FACILITATOR === 'http' ? 'http' : 'inproc';
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
const GATE_PAID = '/bench/paid';
const EXPRESS_PAID = 'paid path: @x402/express';
const KOA_PAID = 'paid path: x402Koa (ours)';

const log = (line: string) => process.stderr.write(`• ${line}\n`);

interface Servers {
  all: ServerChild[];
  platform: ServerChild;
  official: ServerChild;
  ours: ServerChild;
  oursInproc?: ServerChild;
  gate?: ServerChild;
  /** The gate's origin (a plain node:http server): every gate request runs through it too. */
  origin?: ServerChild;
}

async function startServers(buyer: string): Promise<Servers> {
  log(
    `starting the stub platform, @x402/express and x402Koa servers (platform reached ${PLATFORM_MODE === 'http' ? 'over HTTP' : 'in-process'})`,
  );
  const platform = await startServer('platform', {});
  const facilitator = FACILITATOR_MODE === 'http' ? await startServer('facilitator', {}) : undefined;
  const childEnv = {
    ...(facilitator ? { BENCH_FACILITATOR_URL: `http://127.0.0.1:${facilitator.port}` } : {}),
    BENCH_PAYER: buyer,
    BENCH_PLATFORM_URL: `http://127.0.0.1:${platform.port}`,
    BENCH_PLATFORM: PLATFORM_MODE,
    BENCH_CODE: CODE,
    ...(process.env.BENCH_OUR_FETCH === 'global' ? { BENCH_OUR_FETCH: 'global' } : {}),
  };
  // With the platform over HTTP, a second x402Koa server answers the platform in-process too: the difference
  // between the two is what the per-payment ledger report over HTTP costs the seller's process.
  // (Not with the facilitator over HTTP: the diagnostic's injected fetch would carry the facilitator's calls too.)
  const diagnostic = PLATFORM_MODE === 'http' && FACILITATOR_MODE === 'inproc' && CASES.has('paid');
  const [official, ours, oursInproc] = await Promise.all([
    startServer('express', childEnv),
    startServer('koa', childEnv),
    diagnostic ? startServer('koa', { ...childEnv, BENCH_PLATFORM: 'inproc' }, 'koa-inproc') : undefined,
  ]);
  if (oursInproc) oursInproc.name = 'koa (platform in-process)';
  const all = [platform, ...(facilitator ? [facilitator] : []), official!, ours!, ...(oursInproc ? [oursInproc] : [])];
  let gate: ServerChild | undefined;
  let origin: ServerChild | undefined;
  if (CASES.has('gate')) {
    // An origin with no payment code, and treasury-gate in front of it (seller `bench`, path prefix).
    origin = await startServer('origin', {});
    all.push(origin);
    gate = await startServer('gate', { ...childEnv, BENCH_ORIGIN_URL: `http://127.0.0.1:${origin.port}` });
    all.push(gate);
  }
  return { all, platform, official: official!, ours: ours!, oursInproc, gate, origin };
}

/** Every server's challenge, checked to ask for the same terms as x402Koa's. */
async function challenges(s: Servers): Promise<Map<ServerChild, Challenge>> {
  const out = new Map<ServerChild, Challenge>();
  for (const server of [s.official, s.ours, s.oursInproc, s.gate])
    if (server) out.set(server, await readChallenge(server, server === s.gate ? GATE_PAID : '/paid'));
  const ours = out.get(s.ours)!.accepts[0]!;
  for (const [server, c] of out) {
    const mismatch = sameTerms(c.accepts[0]!, ours);
    if (mismatch) throw new Error(`${server.name} and x402Koa advertise different terms: ${mismatch}`);
  }
  if (
    ours.payTo.toLowerCase() !== BENCH_PAY_TO.toLowerCase() ||
    ours.asset.toLowerCase() !== BENCH_USDC.toLowerCase() ||
    ours.amount !== '10000'
  )
    throw new Error(`unexpected terms ${JSON.stringify(ours)}`);
  return out;
}

async function signPayments(buyerKey: `0x${string}`, terms: Challenge['accepts'][0]) {
  const threads = Math.max(1, Math.min(os.cpus().length, 4));
  log(`signing up to ${PAYMENTS} EIP-3009 authorizations on ${threads} threads (time box ${SIGN_SECONDS} s)`);
  const started = performance.now();
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
  const seconds = (performance.now() - started) / 1000;
  log(`signed ${authorizations.length} in ${seconds.toFixed(1)} s`);
  return { authorizations, seconds };
}

/** payments[0] of each server: 200 with a receipt; sent again to ours, 402 (the replay guard). */
async function checkPayments(s: Servers, payments: Map<ServerChild, string[]>): Promise<void> {
  for (const [server, list] of payments) {
    const paidPath = server === s.gate ? GATE_PAID : '/paid';
    const res = await getOnce(server.port, paidPath, { 'payment-signature': list[0]! });
    if (res.status !== 200 || res.headers['payment-response'] === undefined)
      throw new Error(`${server.name}: a valid payment gave HTTP ${res.status} ${res.body.slice(0, 300)}`);
    if (server === s.official) continue;
    const again = await getOnce(server.port, paidPath, { 'payment-signature': list[0]! });
    if (again.status !== 402)
      throw new Error(`${server.name}: a reused payment gave HTTP ${again.status}, expected 402 (replay guard)`);
  }
  log(
    'set-up checks passed: every server 402 without payment, 200 with a receipt for a valid one; ours refuse a reused one',
  );
}

interface Planned extends SliceVariant {
  warm: () => Promise<Outcome>;
  against?: string;
  goal?: number;
}

/** The alternations this run makes: one per case group, each variant on its own server. */
function plan(s: Servers, payments: Map<ServerChild, string[]>): Planned[][] {
  const get = new Map(s.all.map((x) => [x, makeRequester(x.port, CONCURRENCY)]));
  const plain = (label: string, server: ServerChild, path: string, expect: number) => {
    const op = () => get.get(server)!(path, {}, expect, false);
    return { label, server, op, warm: op };
  };
  const paid = (label: string, server: ServerChild) => {
    const ops = paidOps(get.get(server)!, payments.get(server)!, server === s.gate ? GATE_PAID : '/paid');
    return { label, server, op: ops.timed, warm: ops.warm };
  };
  const groups: Planned[][] = [];
  if (CASES.has('402'))
    groups.push([
      plain('402 path: @x402/express', s.official, '/paid', 402),
      {
        ...plain('402 path: x402Koa (ours)', s.ours, '/paid', 402),
        against: '402 path: @x402/express',
        goal: TARGET['402'],
      },
    ]);
  const paidGroup: Planned[] = [];
  if (CASES.has('paid')) paidGroup.push(paid(EXPRESS_PAID, s.official));
  if (CASES.has('paid') || s.gate)
    paidGroup.push({
      ...paid(KOA_PAID, s.ours),
      ...(CASES.has('paid') ? { against: EXPRESS_PAID, goal: TARGET.paid } : {}),
    });
  if (s.oursInproc) paidGroup.push({ ...paid('paid, ledger in-process (diag.)', s.oursInproc), against: EXPRESS_PAID });
  if (s.gate)
    paidGroup.push({
      ...paid('paid path: gate (ours)', s.gate),
      helper: s.origin,
      against: KOA_PAID,
      goal: TARGET.gate,
    });
  if (paidGroup.length) groups.push(paidGroup);
  if (CASES.has('free'))
    groups.push([
      plain('free route: @x402/express', s.official, '/free', 200),
      { ...plain('free route: x402Koa (ours)', s.ours, '/free', 200), against: 'free route: @x402/express' },
    ]);
  return groups;
}

const sliceLine = (x: SliceRecord) =>
  `round ${x.round} ${x.label}: ${(x.requests / x.seconds).toFixed(0)}/s, server ${x.serverCpuUsPerRequest.toFixed(0)} µs CPU and ${x.switchesPerRequest.toFixed(2)} switches a request${x.helperCpuUsPerRequest === undefined ? '' : `, its origin ${x.helperCpuUsPerRequest.toFixed(0)} µs`}, load generator ${x.loadGeneratorCpuUsPerRequest.toFixed(0)} µs, machine busy ${(x.machineBusy * 100).toFixed(0)} % (others ${(x.othersBusy * 100).toFixed(0)} %), steal ${(x.machineSteal * 100).toFixed(1)} %`;

async function runGroup(group: Planned[], benchPids: number[]): Promise<{ rows: ReportRow[]; exhausted: boolean }> {
  for (const v of group) {
    log(`${v.label}: warm-up ${WARMUP_SECONDS} s`);
    await drive(CONCURRENCY, WARMUP_SECONDS, v.warm);
  }
  log(`${group.map((v) => v.label).join(' / ')}: ${ROUNDS} rounds of ${SLICE_SECONDS}-s slices, alternated`);
  const out = await runAlternated(group, {
    rounds: ROUNDS,
    sliceSeconds: SLICE_SECONDS,
    concurrency: CONCURRENCY,
    benchPids,
    onSlice: (x) => log(sliceLine(x)),
  });
  for (const r of out.variants)
    if (r.result.errors > 0) log(`${r.label}: ${r.result.errors} errors, first: ${r.result.firstError}`);
  if (out.exhausted) log('pre-signed payments ran out; the alternation ended early');
  const rows = out.variants.map((r, i) => ({ ...r, against: group[i]!.against, goal: group[i]!.goal }));
  return { rows, exhausted: out.exhausted };
}

const fmtCounts = (c: Record<string, number> | undefined) =>
  c && Object.keys(c).length
    ? Object.entries(c)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')
    : 'none';

function notes(
  s: Servers,
  start: Map<ServerChild, ServerStats>,
  end: Map<ServerChild, ServerStats>,
  signed: { count: number; seconds: number; exhausted: boolean },
  gateOriginUs: number | undefined,
): string[] {
  const mib = (n: number | undefined) => ((n ?? NaN) / 1024 / 1024).toFixed(0);
  const mb = (x: ServerChild) =>
    `${mib(start.get(x)?.rss)} → ${mib(end.get(x)?.rss)} MB (live heap after a full collection ${mib(start.get(x)?.liveHeap)} → ${mib(end.get(x)?.liveHeap)} MB)`;
  const p = end.get(s.platform);
  const ours = [s.ours, ...(s.oursInproc ? [s.oursInproc] : [])];
  return [
    `- timed phases: the variants of each group (402; paid and gate; free) took turns in ${SLICE_SECONDS}-s slices, ${ROUNDS} rounds, the order reversed every other round, so that the machine's drift hits every side alike; a row's figures are the sums of its slices. Ratio: requests/s ÷ the compared row's in the same alternation; "CPU" is the compared server's CPU per request ÷ this one's (higher is better). CPU µs/req is the server child's user+system CPU over the whole alternated stretch ÷ its requests; "per slice" is its range over the row's slices.`,
    `- servers: each in its own child process on 127.0.0.1; express 5.x with ETag and X-Powered-By off (Koa sends neither); Koa 3.x with x402Koa and a one-line handler. Same price (10000 atomic USDC = $0.01), payTo, network ${BENCH_NETWORK}.`,
    ...(process.env.BENCH_OUR_FETCH === 'global'
      ? [
          '- our calls out: x402Koa and the gate were given the global `fetch` (BENCH_OUR_FETCH=global), not their own transport.',
        ]
      : []),
    FACILITATOR_MODE === 'http'
      ? `- facilitator: stubbed, answers verify {isValid:true} and settle {success:true} at once, in its own child process on loopback, asked over HTTP (two calls a paid request) — @x402/express through @x402/core's HTTPFacilitatorClient (global fetch), x402Koa through facilitator_url and the gate through FACILITATOR_URL (their own transport).`
      : `- facilitator: stubbed, answers verify {isValid:true} and settle {success:true} at once, in each server process — the same kind of object passed to x402ResourceServer for @x402/express and as the \`facilitator\` option of x402Koa.`,
    `- platform: stubbed (/v1/auth/verify → one endpoint, /v1/ledger → 201), ${PLATFORM_MODE === 'http' ? 'in its own child process, reached by x402Koa over HTTP through its own transport (undici keep-alive pool, no `fetch` given; every settled payment reported, in the background, batched on /v1/ledger/batch)' : 'answered in-process by the same injected fetch'}; ledger rows received: ${p?.ledgerReports ?? 'n/a'}${p?.ledgerCalls !== undefined ? ` in ${p.ledgerCalls} calls` : ''}${PLATFORM_MODE === 'http' ? ` over ${p?.connections} TCP connections, stub platform CPU ${((p!.cpuUserUs + p!.cpuSystemUs) / 1e6).toFixed(1)} s` : ''}. @x402/express has no ledger.${s.oursInproc ? ' The "ledger in-process (diag.)" row is a second x402Koa process whose injected fetch also answers the platform without a socket.' : ''}`,
    `- payments: ${signed.count} EIP-3009 authorizations signed up front in ${signed.seconds.toFixed(1)} s (fresh nonce each), each wrapped around the requirement the server itself advertised and used at most once per server.${signed.exhausted ? ' They ran out: an alternation ended early.' : ''}`,
    ...(s.gate
      ? [
          `- gate: treasury-gate in its own child process, seller \`bench\` by path prefix (${GATE_PAID}), proxying each paid request over a keep-alive HTTP connection to an origin with no payment code (a third child process) and holding its body until settlement; same facilitator object, ledger batched to the stub platform. Its ratio is against x402Koa's paid row of the same alternation (the Koa handler runs in-process: no proxy hop). The origin's own CPU over the gate's slices: ${gateOriginUs?.toFixed(0) ?? 'n/a'} µs a gate request (on the same cores, not in the gate's row). Counters: requests ${fmtCounts(end.get(s.gate)?.outcomes)}; ledger reports ${fmtCounts(end.get(s.gate)?.ledgerOutcomes)}; RSS ${mb(s.gate)}.`,
        ]
      : []),
    `- x402Koa's own counters at the end (whole run): ${ours.map((x) => `${x.name}: requests ${fmtCounts(end.get(x)?.outcomes)}; ledger reports ${fmtCounts(end.get(x)?.ledgerOutcomes)}`).join(' — ')}.`,
    `- RSS after start → at the end: @x402/express ${mb(s.official)}, x402Koa ${mb(s.ours)}${s.oursInproc ? `, x402Koa (platform in-process) ${mb(s.oursInproc)}` : ''}, stub platform ${mb(s.platform)}.`,
  ];
}

async function statsOf(servers: ServerChild[]): Promise<Map<ServerChild, ServerStats>> {
  const out = new Map<ServerChild, ServerStats>();
  for (const x of servers) out.set(x, await x.stats(true));
  return out;
}

async function main(): Promise<void> {
  const loadBefore = os.loadavg();
  const buyerKey = generatePrivateKey();
  const buyer = privateKeyToAccount(buyerKey);
  let s: Servers | undefined;
  try {
    log(`our code: ${CODE === 'dist' ? 'compiled (dist/)' : 'TypeScript sources through tsx'}`);
    s = await startServers(buyer.address);
    const startStats = await statsOf(s.all);
    const terms = await challenges(s);
    const signed = await signPayments(buyerKey, terms.get(s.ours)!.accepts[0]!);
    // The same authorization is wrapped once per server (each server's own `accepted`); the servers are separate
    // processes, so each sees every authorization at most once.
    const wrap = (c: Challenge, list: SignedAuthorization[]) => list.map((a) => paymentHeader(c, a));
    const payments = new Map([...terms].map(([server, c]) => [server, wrap(c, signed.authorizations)]));
    await checkPayments(s, payments);
    const rows: ReportRow[] = [];
    let exhausted = false;
    for (const group of plan(s, payments)) {
      const out = await runGroup(
        group,
        s.all.map((x) => x.child.pid!),
      );
      rows.push(...out.rows);
      exhausted ||= out.exhausted;
    }
    const finalStats = await statsOf(s.all);
    const loadAfter = os.loadavg();
    const lines = [
      '',
      `x402 seller middleware benchmark — ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
      `our code: ${CODE === 'dist' ? 'the compiled build (dist/)' : 'the TypeScript sources through tsx (no current build: `npm run build` for the compiled code production runs)'}`,
      `load average before ${loadBefore.map((l) => l.toFixed(2)).join(' ')}, after ${loadAfter.map((l) => l.toFixed(2)).join(' ')}; ${CONCURRENCY} concurrent keep-alive connections, ${WARMUP_SECONDS} s warm-up per variant, then ${ROUNDS} alternated ${SLICE_SECONDS}-s slices per variant`,
      '',
      ...reportTable(rows),
      '',
      ...notes(
        s,
        startStats,
        finalStats,
        { count: signed.authorizations.length, seconds: signed.seconds, exhausted },
        rows.find((r) => r.helperCpuUsPerRequest !== undefined)?.helperCpuUsPerRequest,
      ),
      '- per-slice medians:',
      ...sliceDiagnostics(rows).map((l) => `  ${l}`),
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    if (s) await Promise.all(s.all.map(stopServer));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

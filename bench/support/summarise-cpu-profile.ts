/**
 * Summarises a V8 `.cpuprofile` (as written by `node --cpu-prof`, e.g. the server children of
 * `bench/x402-middleware-bench.ts` with BENCH_CPU_PROFILE_DIR): top functions by self time, top functions by
 * total (inclusive) time, and self time per file. Positions are 1-based `file:line:column` of the function's
 * start in the code V8 ran (for tsx-loaded TypeScript that is the transpiled code, whose lines are close to,
 * not always equal to, the source lines).
 *
 * Usage: node --import tsx bench/support/summarise-cpu-profile.ts <file.cpuprofile> [--top=30] [--filter=S]
 *        [--window=A-B | --busy | --phase=P[,Q]]
 *   --filter keeps only samples whose stack has a frame whose file includes S (e.g. `src/x402`);
 *   --window keeps samples taken from A to B seconds after the profile started; --busy keeps the seconds in
 *   which the thread was idle less than half the time (the load phases, without start-up and waiting);
 *   --phase keeps the phases `npm run bench` marked beside the profile (`--phase=(a),(b)`; ./profile-windows.ts)
 *   and prints each function's time per payment of those phases, µs, beside its share.
 * A per-second busy/idle timeline is printed first, to pick a window. Idle samples are never counted in the
 * shares. V8 samples wall time: a system call that wakes another process (a socket write) is charged with the
 * time its thread then waited to run again; read CPU from `perf` (BENCH_PERF_DIR).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readPhaseMarks } from './profile-windows.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (!file) {
  process.stderr.write(
    'usage: summarise-cpu-profile.ts <file.cpuprofile> [--top=30] [--filter=S] [--window=A-B | --busy]\n',
  );
  process.exit(2);
}
const top = Number(flag('top') ?? 30);
const filter = flag('filter');
const busyOnly = args.includes('--busy');
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
/** The marked phases asked for, as windows in seconds since the profile started, and their payments. */
const phases = (() => {
  const names = flag('phase')?.split(',');
  if (!names) return undefined;
  const marks = readPhaseMarks(file);
  const picked = names.map((name) => {
    const mark = marks?.[name];
    if (!mark) throw new Error(`no mark for phase ${name} beside ${file}`);
    return [(mark.startMicros - profile.startTime) / 1e6, (mark.endMicros - profile.startTime) / 1e6, mark.ops];
  });
  return { windows: picked, ops: picked.reduce((sum, [, , ops]) => sum + ops!, 0) };
})();
const windowArg = phases?.windows ?? (flag('window') ? [flag('window')!.split('-').map(Number)] : undefined);
const root = process.cwd();

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of profile.nodes) byId.set(n.id, n);
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const shortUrl = (url: string) => {
  if (!url) return '(native)';
  const p = url.startsWith('file://') ? url.slice(7) : url;
  return p.startsWith(root) ? path.relative(root, p) : p;
};
const keyOf = (n: ProfileNode) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'}  ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}:${f.columnNumber + 1}` : ''}`;
};

// Sample times (seconds since the start) and a per-second idle/busy timeline.
const sampleAt: number[] = [];
const idleBySecond = new Map<number, [number, number]>();
{
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const s = (t - profile.startTime) / 1e6;
    sampleAt.push(s);
    const sec = Math.floor(s);
    const e = idleBySecond.get(sec) ?? [0, 0];
    e[byId.get(profile.samples[i]!)!.callFrame.functionName === '(idle)' ? 0 : 1]++;
    idleBySecond.set(sec, e);
  }
}
const busySeconds = new Set([...idleBySecond].filter(([, [idle, busy]]) => busy > idle).map(([s]) => s));
const inWindow = (i: number) => {
  const s = sampleAt[i]!;
  if (windowArg) return windowArg.some(([a, b]) => s >= a! && s < b!);
  if (busyOnly) return busySeconds.has(Math.floor(s));
  return true;
};
const timeline = [...idleBySecond.entries()]
  .sort((a, b) => a[0] - b[0])
  .map(([s, [idle, busy]]) => `${s}:${Math.round((100 * busy) / (idle + busy))}%`)
  .join(' ');

const self = new Map<string, number>();
const total = new Map<string, number>();
const perFile = new Map<string, number>();
let all = 0;
let kept = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0) / 1000; // ms; the delta after the sample
  if (!inWindow(i)) continue;
  const leaf = byId.get(profile.samples[i]!)!;
  if (leaf.callFrame.functionName === '(idle)') continue;
  all += dt;
  const stack: ProfileNode[] = [];
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) stack.push(byId.get(id)!);
  if (filter && !stack.some((n) => n.callFrame.url.includes(filter))) continue;
  kept += dt;
  const k = keyOf(leaf);
  self.set(k, (self.get(k) ?? 0) + dt);
  const fileKey = shortUrl(leaf.callFrame.url) || leaf.callFrame.functionName;
  perFile.set(fileKey, (perFile.get(fileKey) ?? 0) + dt);
  const seen = new Set<string>();
  for (const n of stack) {
    const key = keyOf(n);
    if (seen.has(key)) continue;
    seen.add(key);
    total.set(key, (total.get(key) ?? 0) + dt);
  }
}

const list = (m: Map<string, number>, n: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([k, v]) =>
        `${v.toFixed(0).padStart(7)} ms ${((100 * v) / kept).toFixed(1).padStart(5)}%${phases ? ` ${((v * 1000) / phases.ops).toFixed(1).padStart(7)} µs/pay` : ''}  ${k}`,
    )
    .join('\n');

process.stdout.write(
  [
    `busy share per second since start: ${timeline}`,
    `${file}: ${all.toFixed(0)} ms busy${windowArg ? ` in ${windowArg.map(([a, b]) => `${a!.toFixed(1)}-${b!.toFixed(1)}`).join(', ')} s` : busyOnly ? ` in the ${busySeconds.size} busy seconds` : ''}${filter ? `, ${kept.toFixed(0)} ms with a frame in ${filter}` : ''}${phases ? `; ${phases.ops} payments, ${((kept * 1000) / phases.ops).toFixed(0)} µs busy a payment` : ''}`,
    '',
    `top ${top} by self time:`,
    list(self, top),
    '',
    `top ${top} by total time:`,
    list(total, top),
    '',
    'self time by file:',
    list(perFile, 25),
    '',
  ].join('\n'),
);

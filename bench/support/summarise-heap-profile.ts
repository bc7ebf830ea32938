/**
 * Summarises a V8 sampling heap profile (`.heapprofile`, as ./heap-sampling-probe.ts writes the API's over (a) and
 * (b) of `npm run bench` with BENCH_HEAP_PROFILE_DIR): the bytes allocated, by allocating function (self) and by
 * function with everything it called (total), per payment when the phases' marks lie beside the profile
 * (./profile-windows.ts; every phase marked is counted, since the sampling spans them all).
 *
 * Usage: node --import tsx bench/support/summarise-heap-profile.ts <file.heapprofile> [--top=30] [--filter=S]
 *   --filter keeps only samples whose stack has a frame whose file includes S (e.g. `src/api/pay`).
 * Limits: sampled (a site's bytes are estimates, coarser for small sites); positions are those of the code V8 ran.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readPhaseMarks } from './profile-windows.js';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
if (!file) {
  process.stderr.write('usage: summarise-heap-profile.ts <file.heapprofile> [--top=30] [--filter=S]\n');
  process.exit(2);
}
const top = Number(flag('top') ?? 30);
const filter = flag('filter');
const { head } = JSON.parse(fs.readFileSync(file, 'utf8')) as { head: HeapNode };
const marks = readPhaseMarks(file);
const ops = marks ? Object.values(marks).reduce((sum, m) => sum + m.ops, 0) : 0;
const root = process.cwd();

const keyOf = (n: HeapNode) => {
  const f = n.callFrame;
  const url = f.url.startsWith('file://') ? f.url.slice(7) : f.url;
  const short = url.startsWith(root) ? path.relative(root, url) : url;
  return `${f.functionName || '(anonymous)'}  ${short || '(native)'}${short ? `:${f.lineNumber + 1}` : ''}`;
};

const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
let kept = 0;
const walk = (node: HeapNode, stack: HeapNode[]) => {
  const here = [...stack, node];
  if (node.selfSize > 0) {
    all += node.selfSize;
    if (!filter || here.some((n) => n.callFrame.url.includes(filter))) {
      kept += node.selfSize;
      self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + node.selfSize);
      for (const key of new Set(here.map(keyOf))) total.set(key, (total.get(key) ?? 0) + node.selfSize);
    }
  }
  for (const child of node.children) walk(child, here);
};
walk(head, []);

const list = (m: Map<string, number>) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(
      ([k, v]) =>
        `${(v / 1024).toFixed(0).padStart(9)} KiB ${((100 * v) / kept).toFixed(1).padStart(5)}%${ops ? ` ${(v / ops).toFixed(0).padStart(7)} B/pay` : ''}  ${k}`,
    )
    .join('\n');

process.stdout.write(
  [
    `${file}: ${(all / 1024 / 1024).toFixed(1)} MiB allocated${filter ? `, ${(kept / 1024 / 1024).toFixed(1)} MiB with a frame in ${filter}` : ''}${ops ? `; ${ops} payments, ${(kept / ops / 1024).toFixed(1)} KiB a payment` : ''}`,
    '',
    `top ${top} by self (the allocating function):`,
    list(self),
    '',
    `top ${top} by total (with what it called):`,
    list(total),
    '',
  ].join('\n'),
);

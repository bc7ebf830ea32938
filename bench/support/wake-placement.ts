/**
 * A baseline for the steady phase of `npm run bench`: where this machine's scheduler runs a process woken by
 * a write, and how long that process waits when the writer goes on running. The parent writes a small
 * message to a child over a unix socket every 3 ms and then keeps its core busy for 1 ms, as the API does
 * after handing a statement to PostgreSQL or a request to the signer; the child notes, for each message, the
 * core it runs on and how long after the write it started (CLOCK_MONOTONIC in both processes).
 *
 * Why: Linux places a task woken by a socket write ("sync" wake-up) on the writer's core when the writer is
 * alone there, expecting the writer to sleep soon; it moves it to an idle core only when the scheduler sees
 * both cores share a cache. A guest kernel that is shown no cache topology (as on the 2-core VM of the
 * README) sees none, so the woken process waits behind its writer while the other core idles. On a host
 * whose scheduler sees shared caches the share on the writer's core is low and the wait is short.
 */
import fs from 'node:fs';
import { startSocketChild } from './socket-child.js';

export interface WakePlacement {
  wakes: number;
  /** Share of wake-ups on the writer's core. */
  onWritersCore: number;
  /** From the write to the woken process running, µs. */
  p50Micros: number;
  p90Micros: number;
}

/** The core the calling thread last ran on (field 39 of /proc/self/stat; the current one when called). */
const CURRENT_CPU = `(() => Number(require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[36]))`;

const CHILD = `const net = require('node:net');
const cpu = ${CURRENT_CPU};
const waits = []; let same = 0; let buffered = '';
net.createServer((s) => s.on('data', (d) => {
  const now = process.hrtime.bigint();
  const mine = cpu();
  buffered += d.toString();
  let nl;
  while ((nl = buffered.indexOf('\\n')) >= 0) {
    const line = buffered.slice(0, nl); buffered = buffered.slice(nl + 1);
    if (line === 'end') { s.end(JSON.stringify({ waits, same })); return; }
    const [t, writer] = line.split(' ');
    waits.push(Number(now - BigInt(t)) / 1000);
    if (Number(writer) === mine) same++;
  }
})).listen(process.argv[1], () => process.stdout.write('up\\n'));`;

const currentCpu = (): number =>
  Number(fs.readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[36]);

export async function measureWakePlacement(wakes = 600): Promise<WakePlacement> {
  const { socket, stop } = await startSocketChild(CHILD);
  try {
    const reply = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (d: Buffer) => (text += d.toString())).once('end', () => resolve(text));
    });
    for (let i = 0; i < wakes; i++) {
      await new Promise((r) => setTimeout(r, 3));
      socket.write(`${process.hrtime.bigint()} ${currentCpu()}\n`);
      const until = performance.now() + 1;
      while (performance.now() < until); // the writer goes on running, as a busy API does
    }
    socket.write('end\n');
    const { waits, same } = JSON.parse(await reply) as { waits: number[]; same: number };
    waits.sort((a, b) => a - b);
    const at = (p: number) => waits[Math.min(waits.length - 1, Math.floor(p * waits.length))] ?? NaN;
    return {
      wakes: waits.length,
      onWritersCore: same / Math.max(1, waits.length),
      p50Micros: at(0.5),
      p90Micros: at(0.9),
    };
  } finally {
    stop();
  }
}

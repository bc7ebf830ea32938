/**
 * A baseline for the steady phase of `npm run bench`: what this machine charges for one hand-off between two
 * processes, with nothing else to do. A child process echoes 200-byte messages over a unix socket; the
 * parent sends one and waits for its echo, either paced at the steady phase's rate (each message wakes both
 * processes from idle, and the parent's timer wakes it too) or back to back (both stay busy). The figure is
 * the whole machine's CPU time (/proc/stat) per round trip.
 *
 * Why: a payment is handed over six to eight times (load generator → API → signer (→ its HSM thread →
 * signer, under load) → API → PostgreSQL → API → load generator). At saturation those hand-offs find the
 * processes awake; at a steady, lower rate each one wakes a process from idle, and on a virtual machine that
 * costs several times more. This line shows how much, in the same run as the phase it explains.
 */
import { startSocketChild } from './socket-child.js';
import { machineSeconds } from './pay-bench-cpu.js';

export interface WakeUpCost {
  /** Machine CPU µs per round trip when paced at `rate` per second. */
  pacedMicros: number;
  /** Machine CPU µs per round trip back to back. */
  backToBackMicros: number;
}

const ECHO = `const net = require('node:net');
net.createServer((s) => s.on('data', (d) => s.write(d))).listen(process.argv[1], () => process.stdout.write('up\\n'));`;

export async function measureWakeUpCost(rate: number, seconds: number): Promise<WakeUpCost> {
  const { socket, stop } = await startSocketChild(ECHO);
  try {
    const message = Buffer.alloc(200, 0x61);
    let received = 0;
    let waiting: (() => void) | undefined;
    socket.on('data', (d: Buffer) => {
      received += d.length;
      if (received >= message.length) {
        received -= message.length;
        waiting?.();
      }
    });
    const roundTrip = () =>
      new Promise<void>((resolve) => {
        waiting = resolve;
        socket.write(message);
      });
    const run = async (paced: boolean, durationSeconds: number) => {
      const started = performance.now();
      const busyBefore = machineSeconds().busy;
      let n = 0;
      while (performance.now() - started < durationSeconds * 1000) {
        if (paced) {
          const wait = started + (n * 1000) / rate - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        await roundTrip();
        n++;
      }
      return ((machineSeconds().busy - busyBefore) / n) * 1e6;
    };
    await run(false, 0.5); // warm-up
    const backToBackMicros = await run(false, seconds);
    const pacedMicros = await run(true, seconds);
    socket.destroy();
    return { pacedMicros, backToBackMicros };
  } finally {
    stop();
  }
}

/**
 * Why @x402/express's CPU per paid request moves between runs of `npm run bench:x402` with no change to it: two
 * identical @x402/express children, driven in alternating one-second slices of one run, the second with a
 * competing process (a busy loop, paused between its slices with SIGSTOP/SIGCONT) taking one of the machine's
 * cores during its own slices only. If the server's CPU time per request rises when the machine's other core is
 * busy, a run's figure depends on what else runs on the machine, not on the code under test. Then both cores are
 * kept busy for SWING_BURST_SECONDS (as the bench's signing of its payments does before its first timed phase)
 * and the same alternation runs again: a machine slower just after such a burst shows in the second part.
 *
 *   node --import tsx bench/support/x402-express-swing.ts
 *
 * Env: SWING_ROUNDS (default 4, per part), SWING_BURST_SECONDS (default 20), SWING_PAYMENTS (default 16,000), BENCH_CONCURRENCY (default 32). Prints one line
 * per slice and the sums. Loopback only; not a test: it prints figures and exits 0.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signTransferAuthorizations } from './sign-transfer-authorizations.js';
import { runAlternated, type SliceRecord } from './x402-alternating-slices.js';
import { startServer, stopServer, type ServerChild } from './x402-bench-children.js';
import { drive, makeRequester } from './x402-bench-load.js';
import { paidOps, paymentHeader, readChallenge } from './x402-bench-payments.js';
import { BENCH_NETWORK } from './x402-bench-servers.js';

const ROUNDS = Number(process.env.SWING_ROUNDS ?? 4);
const BURST_SECONDS = Number(process.env.SWING_BURST_SECONDS ?? 20);
const PAYMENTS = Number(process.env.SWING_PAYMENTS ?? 16_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

const line = (x: SliceRecord) =>
  `round ${x.round} ${x.label}: ${(x.requests / x.seconds).toFixed(0)}/s, server ${x.serverCpuUsPerRequest.toFixed(0)} µs CPU, ${x.switchesPerRequest.toFixed(2)} switches a request, load generator ${x.loadGeneratorCpuUsPerRequest.toFixed(0)} µs, machine busy ${(x.machineBusy * 100).toFixed(0)} % (others ${(x.othersBusy * 100).toFixed(0)} %), steal ${(x.machineSteal * 100).toFixed(1)} %`;

async function main(): Promise<void> {
  const key = generatePrivateKey();
  const env = { BENCH_PAYER: privateKeyToAccount(key).address, BENCH_PLATFORM_URL: 'http://127.0.0.1:9' };
  const servers: ServerChild[] = await Promise.all([startServer('express', env), startServer('express', env)]);
  const burners = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;);'], { stdio: 'ignore' }));
  const burner = burners[0]!;
  for (const b of burners) b.kill('SIGSTOP');
  try {
    const challenge = await readChallenge(servers[0]!);
    const terms = challenge.accepts[0]!;
    const signed = await signTransferAuthorizations(
      {
        privateKey: key,
        to: terms.payTo as `0x${string}`,
        value: terms.amount,
        asset: terms.asset as `0x${string}`,
        chainId: Number(BENCH_NETWORK.split(':')[1]),
        name: terms.extra!.name!,
        version: terms.extra!.version!,
        validSeconds: terms.maxTimeoutSeconds,
        count: PAYMENTS,
        seconds: 60,
      },
      Math.min(os.cpus().length, 4),
    );
    const payments = signed.map((a) => paymentHeader(challenge, a));
    const variants = servers.map((server, i) => {
      const ops = paidOps(makeRequester(server.port, CONCURRENCY), payments);
      return {
        label: i === 0 ? 'express, machine as it is' : 'express, a busy loop on the other core',
        server,
        op: ops.timed,
        warm: ops.warm,
        ...(i === 1 ? { around: { start: () => burner.kill('SIGCONT'), stop: () => burner.kill('SIGSTOP') } } : {}),
      };
    });
    for (const v of variants) await drive(CONCURRENCY, 2, v.warm);
    for (const part of ['before a burst', `after ${BURST_SECONDS} s of both cores busy`]) {
      if (part !== 'before a burst') {
        for (const b of burners) b.kill('SIGCONT');
        await new Promise((r) => setTimeout(r, BURST_SECONDS * 1000));
        for (const b of burners) b.kill('SIGSTOP');
      }
      const out = await runAlternated(variants, {
        rounds: ROUNDS,
        sliceSeconds: 1,
        concurrency: CONCURRENCY,
        benchPids: servers.map((s) => s.child.pid!),
        onSlice: (x) => console.log(line(x)),
      });
      for (const v of out.variants)
        console.log(
          `${part}, ${v.label}: ${(v.result.ok / v.result.seconds).toFixed(0)}/s, ${v.cpuUsPerRequest.toFixed(0)} µs CPU a request`,
        );
    }
  } finally {
    for (const b of burners) b.kill('SIGKILL');
    await Promise.all(servers.map(stopServer));
  }
}

await main();
process.exit(0);

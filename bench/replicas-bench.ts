/**
 * `npm run bench:replicas`: the same pay load against one and then two treasury-api processes sharing one
 * PostgreSQL database and one signer (real embedded PostgreSQL, real SoftHSM, each API its own process), to
 * show what docs/scaling.md says: replicas need no coordination beyond PostgreSQL, and each opens its pool
 * plus the pay path's two writer connections. Prints, per layout: pays/s, p50/p99, the requests each
 * replica served, errors, and the most connections each API process held at once (pg_stat_activity,
 * sampled every 100 ms). The load goes round-robin over the replicas, from this process.
 *
 * Options (env): BENCH_SECONDS (default 8), BENCH_CONCURRENCY (default 32), BENCH_WALLETS (default 200).
 * On a machine whose cores all processes share, two replicas share the same cores: the figure that carries
 * over is the connection count and the absence of errors, not the throughput.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startApiProcess, type ApiProcess } from '../test/support/api-process.js';
import { startTestSigner } from '../test/support/signer-harness.js';
import { createTestDatabase, stopTestPostgres } from '../test/support/test-database.js';
import { paymentRequirements } from '../test/builders/payment-requirements.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WALLETS = Number(process.env.BENCH_WALLETS ?? 200);

async function call(url: string, method: string, route: string, token: string, body?: unknown) {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const signer = await startTestSigner();
  const adminToken = randomBytes(32).toString('base64url');
  const env = { TREASURY_ADMIN_TOKEN: adminToken, TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0' };
  const apis: ApiProcess[] = [];
  const monitor = new pg.Client({ connectionString: db.connectionString, application_name: 'treasury-bench' });
  await monitor.connect();
  try {
    apis.push(await startApiProcess(db, signer, env));
    const minted = await call(apis[0]!.url, 'POST', '/v1/treasury', adminToken, { owner_type: 'agent', owner_id: 'b' });
    const key = minted.body.api_key as string;
    const wallets: string[] = [];
    for (let i = 0; i < WALLETS; i++) {
      const w = await call(apis[0]!.url, 'POST', '/v1/wallets', key, { policy: {} });
      if (w.status !== 201) throw new Error(`wallet: ${w.status} ${JSON.stringify(w.body)}`);
      wallets.push(w.body.id as string);
    }
    const pay = (url: string) =>
      call(url, 'POST', `/v1/wallets/${wallets[Math.floor(Math.random() * wallets.length)]}/pay`, key, {
        payment_requirements: paymentRequirements({ amount: '1000', maxTimeoutSeconds: 300 }),
      });
    // Every wallet paid once through the first API (its key unwrapped in the signer) before measuring.
    await Promise.all(wallets.map((_, i) => pay(apis[0]!.url).then(() => i)));

    process.stdout.write(
      `| API processes | pays/s | p50 ms | p99 ms | served per process | errors | API connections, most at once (per process) |\n|---|---|---|---|---|---|---|\n`,
    );
    for (const replicas of [1, 2]) {
      while (apis.length < replicas) apis.push(await startApiProcess(db, signer, env));
      for (const api of apis) await pay(api.url); // warm the process
      const served = apis.map(() => 0);
      const latencies: number[] = [];
      let errors = 0;
      let next = 0;
      const peak = new Map<number, number>();
      const sampler = setInterval(() => {
        void monitor
          .query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'treasury-api'`)
          .then((r) => peak.set(0, Math.max(peak.get(0) ?? 0, Number(r.rows[0]!.n))))
          .catch(() => undefined);
      }, 100);
      const until = performance.now() + SECONDS * 1000;
      const worker = async () => {
        while (performance.now() < until) {
          const i = next++ % apis.length;
          const started = performance.now();
          const res = await pay(apis[i]!.url).catch(() => ({ status: 0 }));
          if (res.status === 200) {
            latencies.push(performance.now() - started);
            served[i]!++;
          } else errors++;
        }
      };
      const t0 = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const elapsed = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      latencies.sort((a, b) => a - b);
      process.stdout.write(
        `| ${replicas} | ${Math.round(latencies.length / elapsed)} | ${percentile(latencies, 0.5).toFixed(1)} | ${percentile(latencies, 0.99).toFixed(1)} | ${served.join(' / ')} | ${errors} | ${peak.get(0) ?? 0} (${((peak.get(0) ?? 0) / replicas).toFixed(1)}) |\n`,
      );
    }
  } finally {
    await monitor.end().catch(() => undefined);
    for (const api of apis) await api.stop();
    await signer.stop();
    await db.drop();
    await stopTestPostgres();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});

/**
 * `npm run bench:ledger-matching`: what one seller's endpoints cost a ledger report batch, and what that batch
 * costs another tenant. A seller holds BENCH_ENDPOINTS path-pattern endpoints (default 1,000, the default
 * bound of TREASURY_SELLER_MAX_ENDPOINTS; inserted directly, so a figure above the bound can be taken too) and
 * reports BENCH_BATCHES batches of 100 rows (twice) whose routes match no exact endpoint (half match the last
 * pattern, half none: every pattern is tried). Meanwhile a second tenant's single ledger report is timed in a
 * loop. Prints, for the batches alone, the median and worst time, the CPU time of this process (the API and the
 * client) and the statements and rows the API read from PostgreSQL per batch; then the other tenant's median
 * and p90 report time while the batches run again, against its reports with the batches idle.
 *
 * What it says and what it does not: milliseconds on a shared machine move with its load (compare runs taken
 * back to back); the statement and row counts and, less so, the CPU time do not. It runs the API in this process (the test harness: PostgreSQL, SoftHSM signer).
 */
import { randomBytes } from 'node:crypto';
import { startTestTreasury } from '../test/support/api-harness.js';
import { signInWithNewKey } from '../test/support/sign-in.js';

const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 1_000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 5);
const PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';
const NETWORK = 'eip155:84532';

const txHash = () => `0x${randomBytes(32).toString('hex')}`;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};

async function main(): Promise<void> {
  const t = await startTestTreasury({ extraEnv: { TREASURY_LEDGER_VERIFY_INTERVAL_MS: '0' } });
  try {
    const session = (await signInWithNewKey(t)).session;
    const seller = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Many Endpoints' } })).body;
    const other = (await t.request('POST', '/v1/sellers', { token: session, body: { name: 'Other Tenant' } })).body;
    const now = new Date();
    const rows = Array.from({ length: ENDPOINTS }, (_, i) => ({
      id: `ep_${randomBytes(12).toString('hex')}`,
      seller_id: seller.seller_id,
      slug: `p-${i}`,
      method: 'GET',
      path: `/p${i}/{id}`,
      path_pattern: `/p${i}/{id}`,
      price_micro: '10000',
      created_at: new Date(now.getTime() + i),
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await t.db.knex('endpoints').insert(rows.slice(i, i + 500));
    const batch = () =>
      Array.from({ length: 100 }, (_, i) => ({
        tx_hash: txHash(),
        payer: PAYER,
        amount: '10000',
        network: NETWORK,
        route: i % 2 === 0 ? `/p${ENDPOINTS - 1}/x${i}` : `/nothing/${i}`,
      }));
    const otherReport = async () => {
      const started = performance.now();
      const res = await t.request('POST', '/v1/ledger', {
        token: other.pat,
        body: { tx_hash: txHash(), payer: PAYER, amount: '10000', network: NETWORK, route: '/x' },
      });
      if (res.status !== 201) throw new Error(`other tenant: ${res.status} ${JSON.stringify(res.body)}`);
      return performance.now() - started;
    };
    const idle: number[] = [];
    for (let i = 0; i < 30; i++) idle.push(await otherReport());

    // Load-independent figures: statements and rows the API read from PostgreSQL, and this process's CPU time.
    let statements = 0;
    let rowsRead = 0;
    t.db.knex.on('query', () => statements++);
    t.db.knex.on('query-response', (response: unknown) => {
      if (Array.isArray(response)) rowsRead += response.length;
      else if (response && typeof response === 'object' && 'rows' in response)
        rowsRead += (response as { rows: unknown[] }).rows.length;
    });
    const batchMs: number[] = [];
    const batchCpuMs: number[] = [];
    const batchStatements: number[] = [];
    const batchRows: number[] = [];
    const runBatch = async () => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const [s0, r0] = [statements, rowsRead];
      const res = await t.request('POST', '/v1/ledger/batch', { token: seller.pat, body: { rows: batch() } });
      if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
      batchMs.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      batchCpuMs.push((used.user + used.system) / 1000);
      batchStatements.push(statements - s0);
      batchRows.push(rowsRead - r0);
    };
    // The batches alone (the figures per batch), then again with the other tenant reporting meanwhile.
    for (let i = 0; i < BATCHES; i++) await runBatch();
    const alone = { ms: [...batchMs], cpu: [...batchCpuMs], statements: [...batchStatements], rows: [...batchRows] };
    const during: number[] = [];
    let busy = true;
    const probe = (async () => {
      while (busy) during.push(await otherReport());
    })();
    for (let i = 0; i < BATCHES; i++) await runBatch();
    busy = false;
    await probe;
    const ms = (x: number) => x.toFixed(1);
    process.stdout.write(
      [
        `| endpoints | 100-row batch median / worst ms | CPU ms (this process) | statements / rows read | other tenant's report median / p90 ms, idle | while batches run |`,
        `|---|---|---|---|---|---|`,
        `| ${ENDPOINTS} | ${ms(quantile(alone.ms, 0.5))} / ${ms(Math.max(...alone.ms))} | ${ms(quantile(alone.cpu, 0.5))} | ${quantile(alone.statements, 0.5)} / ${quantile(alone.rows, 0.5)} | ${ms(quantile(idle, 0.5))} / ${ms(quantile(idle, 0.9))} | ${ms(quantile(during, 0.5))} / ${ms(quantile(during, 0.9))} (${during.length} reports) |`,
        '',
      ].join('\n'),
    );
  } finally {
    await t.stop();
  }
}

await main();
// The embedded database's handles would keep the process alive.
process.exit(0);

/**
 * `npm run bench`'s run of the store-cost comparison (./store-cost-ab.ts): the second API and signer without the
 * store started beside the bench's own, the comparisons of (a) and (b) made after (b) and again on the signed path,
 * each with the services' CPU in all (both APIs and signers, PostgreSQL's processes), by role, and the signer
 * store's spend statements (pg_stat_statements over its database).
 *
 * Why the services' CPU only: the load generator's is the same for both paths, and anything else the machine runs
 * meanwhile is not the payments'. Limits: without an approver (BENCH_OWNER_POLICIES=0) nothing is compared; the
 * second path's processes run until `close`, through (c) too.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/support/test-database.js';
import { KeepAliveLoadClient } from './keep-alive-load-client.js';
import { startBenchApi } from './service-bench-parts.js';
import { startStoreOffPath, type StoreCostComparison } from './store-cost-ab.js';
import { postgresProcessCpu } from './postgres-process-cpu.js';
import { processCpuSeconds } from './pay-bench-cpu.js';
import { childNodeFlags, startBenchSigner } from './pay-bench-services.js';
import type { PayLoad } from './pay-bench-load.js';

export type StoreCosts = Partial<Record<'spread' | 'hot' | 'signedSpread' | 'signedHot', StoreCostComparison>>;

export interface StoreCostRunOptions {
  connectionString: string;
  pgDataDir: string;
  /** Every service process the bench started (the second path's are added here), and each one's role. */
  children: ChildProcess[];
  roles: Map<ChildProcess, 'API' | 'signer'>;
  /** Rounds (a one-second slice of each path) of each comparison. */
  rounds: number;
  load: PayLoad;
}

/** Opens the store's statement counters; the comparisons are made by the returned run. */
export async function openStoreCostRun(o: StoreCostRunOptions) {
  const { children, roles, pgDataDir, load } = o;
  const costs: StoreCosts = {};
  const busyCpu = () =>
    children.reduce((t, c) => t + processCpuSeconds(c.pid), 0) +
    Object.values(postgresProcessCpu(pgDataDir)).reduce((t, v) => t + v, 0);
  // The same, by role: each path's API and signer (the bench's own and the second path's) and PostgreSQL.
  const busyParts = () => {
    const parts: Record<string, number> = { API: 0, signer: 0 };
    for (const [child, role] of roles) parts[role] = parts[role]! + processCpuSeconds(child.pid);
    // PostgreSQL by where its work comes from: the signer store's connections, the APIs', and the rest (WAL
    // writer, checkpointer, autovacuum, exited processes…).
    parts['PG signer'] = 0;
    parts['PG API'] = 0;
    parts['PG rest'] = 0;
    for (const [role, seconds] of Object.entries(postgresProcessCpu(pgDataDir, true))) {
      const key =
        role === 'backends treasury_signer' ? 'PG signer' : role.startsWith('backends') ? 'PG API' : 'PG rest';
      parts[key] = parts[key]! + seconds;
    }
    return parts;
  };
  // The store's statements that write spends (pg_stat_statements over the signer's database), per comparison.
  const storeStats = new pg.Client(o.connectionString);
  await storeStats.connect();
  await storeStats.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const storeStatements = async () => {
    const { rows } = await storeStats.query<{ calls: number; ms: number; allCalls: number; allMs: number }>(
      `SELECT coalesce(sum(calls) FILTER (WHERE s.query LIKE '%INSERT INTO signer_spends%'), 0)::float8 AS calls,
              coalesce(sum(total_exec_time) FILTER (WHERE s.query LIKE '%INSERT INTO signer_spends%'), 0)::float8 AS ms,
              coalesce(sum(calls), 0)::float8 AS "allCalls", coalesce(sum(total_exec_time), 0)::float8 AS "allMs"
         FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
        WHERE d.datname = 'treasury_signer'`,
    );
    return rows[0]!;
  };
  const compare = (off: Awaited<ReturnType<typeof startStoreOffPath>>, hot: boolean) =>
    off.compare(load.payOnce, {
      rounds: o.rounds,
      ...(hot ? { hot: true } : {}),
      sample: busyCpu,
      parts: busyParts,
      store: storeStatements,
    });
  let storeOff: Awaited<ReturnType<typeof startStoreOffPath>> | undefined;
  return {
    costs,
    /**
     * Starts the second path (a signer without the store, `signerEnv(socket, false)`, and an API using it), warms it,
     * and compares (a) and (b) with it.
     */
    async compareUnsigned(p: {
      dir: string;
      signerEnv: (socket: string, store: boolean) => NodeJS.ProcessEnv;
      adminToken: string;
      walletIds: readonly string[];
      concurrency: number;
    }): Promise<void> {
      process.stderr.write("• the store's cost: a second API and signer without the store, alternating slices\n");
      load.phase = 'store off warm-up';
      storeOff = await startStoreOffPath({
        walletIds: p.walletIds,
        concurrency: p.concurrency,
        start: async () => {
          const offSocket = path.join(p.dir, 'signer-off.sock');
          const offSigner = await startBenchSigner(p.signerEnv(offSocket, false));
          children.push(offSigner);
          roles.set(offSigner, 'signer');
          const offPort = await freePort();
          const offApi = await startBenchApi({
            databaseUrl: o.connectionString,
            signerSocket: offSocket,
            adminToken: p.adminToken,
            port: offPort,
            nodeFlags: childNodeFlags('src/api/main.ts'),
          });
          children.push(offApi);
          roles.set(offApi, 'API');
          const offClient = new KeepAliveLoadClient({
            host: '127.0.0.1',
            port: offPort,
            connections: p.concurrency,
          });
          return {
            children: [offSigner, offApi],
            payOnce: load.payThrough(offClient, ' store off'),
            close: () => offClient.close(),
          };
        },
      });
      load.phase = '(a) store on/off';
      costs.spread = await compare(storeOff, false);
      load.phase = '(b) store on/off';
      costs.hot = await compare(storeOff, true);
    },
    /** After the wallets' policies were signed: the second path warmed again, and (a) and (b) compared again. */
    async compareSigned(): Promise<void> {
      if (!storeOff) return;
      load.phase = 'store off warm-up, signed';
      await storeOff.warm();
      load.phase = '(a, signed) store on/off';
      costs.signedSpread = await compare(storeOff, false);
      load.phase = '(b, signed) store on/off';
      costs.signedHot = await compare(storeOff, true);
    },
    /** Stops the second path and closes the statement counters. */
    async close(): Promise<void> {
      await storeOff?.stop();
      await storeStats.end();
    },
  };
}

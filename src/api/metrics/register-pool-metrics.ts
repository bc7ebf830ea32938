/**
 * The API's knex pool as Prometheus gauges, read at scrape time: `treasury_db_pool_connections{state}` (used,
 * free), `treasury_db_pool_max_connections` and `treasury_db_pool_pending_acquires` (requests waiting for a
 * connection). Waiting requests that do not drain mean the pool is too small for the load, or that
 * connections are not coming back to it.
 */
import type { Knex } from 'knex';
import { Gauge, type Registry } from 'prom-client';

/** The part of knex's tarn.js pool read here. */
interface TarnPool {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

export function registerPoolMetrics(registry: Registry, knex: Knex): void {
  const pool = () => (knex.client as { pool?: TarnPool }).pool;
  new Gauge({
    name: 'treasury_db_pool_connections',
    help: 'Connections of the API database pool by state (used, free).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'used' }, p?.numUsed() ?? 0);
      this.set({ state: 'free' }, p?.numFree() ?? 0);
    },
  });
  new Gauge({
    name: 'treasury_db_pool_max_connections',
    help: 'The most connections the API database pool opens (TREASURY_DB_POOL_MAX).',
    registers: [registry],
    collect() {
      this.set(pool()?.max ?? 0);
    },
  });
  new Gauge({
    name: 'treasury_db_pool_pending_acquires',
    help: 'Requests waiting for a connection of the API database pool.',
    registers: [registry],
    collect() {
      this.set(pool()?.numPendingAcquires() ?? 0);
    },
  });
}

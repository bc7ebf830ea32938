/**
 * A PostgreSQL connection of its own, outside the knex pool, for one group-commit queue
 * (./group-commit-queue.ts keeps at most one statement in flight, so one connection serves it). It is
 * opened on first use with knex's settings and runs with `plan_cache_mode = force_generic_plan`: the
 * queue's statements take batches (id arrays, JSON documents) whose size changes with every execution, so
 * PostgreSQL's plan cache judges each custom plan cheaper than the generic one and plans the statement
 * again every time — measured for the signature record at 180 µs of planning per 230 µs of execution. Their generic plans are
 * primary-key and unique-index lookups (see the statements), so nothing is lost by always using them. The
 * setting stays on this connection: the pool's connections, which run ad-hoc knex queries, keep the default.
 *
 * Defends: a connection that broke (server restart, network) is dropped, and the next statement opens a new
 * one; the statement that saw it break fails, and the queue's callers handle that as any failed statement.
 * Does not defend: statements still running at `close()` fail with the connection.
 */
import type { Knex } from 'knex';
import type { PoolClient } from 'pg';
import { connectionUsableAfter } from '../../db/connection-usable-after.js';
import { positionalRows } from '../../db/wallet-transaction.js';

type RawConnection = PoolClient & { __knex__disposed?: unknown };

export class StatementConnection {
  private client: RawConnection | undefined;
  private opening: Promise<RawConnection> | undefined;
  private closed = false;

  constructor(
    private readonly knex: Knex,
    private readonly options: { onOpen?: () => void } = {},
  ) {}

  /** Runs one prepared statement (`name`) in autocommit; `?` placeholders, as everywhere on the pay path. */
  async query<R = Record<string, unknown>>(sql: string, params: unknown[], name: string): Promise<R[]> {
    const client = this.client && !this.client.__knex__disposed ? this.client : await this.open();
    try {
      return await positionalRows<R>(client, sql, params, name);
    } catch (err) {
      if (!connectionUsableAfter(err) || client.__knex__disposed) this.drop(client);
      throw err;
    }
  }

  /** Closes the connection; later statements are refused. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.opening?.catch(() => undefined));
    this.client = undefined;
    if (client) await this.knex.client.destroyRawConnection(client).catch(() => undefined);
  }

  private open(): Promise<RawConnection> {
    if (this.closed) return Promise.reject(new Error('statement connection closed'));
    if (this.client) this.drop(this.client);
    this.opening ??= (async () => {
      const client = (await this.knex.client.acquireRawConnection()) as RawConnection;
      try {
        await client.query('SET plan_cache_mode = force_generic_plan');
      } catch (err) {
        await this.knex.client.destroyRawConnection(client).catch(() => undefined);
        throw err;
      }
      if (this.closed) {
        await this.knex.client.destroyRawConnection(client).catch(() => undefined);
        throw new Error('statement connection closed');
      }
      this.client = client;
      this.options.onOpen?.();
      return client;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private drop(client: RawConnection): void {
    if (this.client === client) this.client = undefined;
    void this.knex.client.destroyRawConnection(client).catch(() => undefined);
  }
}

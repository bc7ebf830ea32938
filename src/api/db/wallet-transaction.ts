/**
 * The pay path's transaction on a raw pg connection from the knex pool: `BEGIN` and the per-wallet advisory
 * lock go out as one round trip, queries use positional parameters, and the connection is rolled back (or
 * destroyed if even that fails) on any error. Fewer round trips inside the lock is what bounds a hot
 * wallet's throughput.
 *
 * `withWalletSnapshot` is the optimistic variant for a decision that ends in exactly one write statement:
 * the snapshot is one prepared read (no transaction, no lock) and the write runs on its own (autocommit,
 * so it is atomic). It relies on the caller's write failing when the snapshot went stale, and on the caller
 * retrying: the pay path's audit chain is the wallet's version (docs/adr/0006-optimistic-reservations.md),
 * and its writes take the wallet's lock in shared mode (../pay/store/reservation-writer.ts), so a locked
 * transaction here never sees the chain move under it. Two round trips instead of three, none waiting for a
 * lock. `withWalletDecision` hands the write to a group-commit writer instead and ends the wallet's turn
 * before it commits.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { ClientBase, PoolClient } from 'pg';
import { connectionUsableAfter } from './connection-usable-after.js';
import { callbackQuery } from './pg-callback-query.js';

/** Lock keys of recently used wallets (a pure function of the id, asked several times per payment). */
const recentLockKeys = new LRUCache<string, bigint>({ max: 10_000 });

/** The advisory-lock key of a wallet: the first 8 bytes of SHA-256("wallet:" + id), as a signed bigint. */
export function walletLockKey(walletId: string): bigint {
  let key = recentLockKeys.get(walletId);
  if (key === undefined) {
    key = createHash('sha256').update(`wallet:${walletId}`).digest().readBigInt64BE(0);
    recentLockKeys.set(walletId, key);
  }
  return key;
}

export interface WalletTx {
  /** With `name`, the statement is prepared once per connection and reused (the hot path's statements). */
  query<R = Record<string, unknown>>(sql: string, params: unknown[], name?: string): Promise<R[]>;
}

const positionalCache = new Map<string, string>();

/** Replaces each `?` with `$1…$n` (the SQL passed here never contains a literal question mark). */
export function positional(sql: string): string {
  let text = positionalCache.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (positionalCache.size < 256) positionalCache.set(sql, text);
  }
  return text;
}

/**
 * One statement with `?` placeholders on `client`, through pg's callback form (./pg-callback-query.ts): its rows.
 * With `name`, prepared once per connection and reused (the hot path's statements).
 */
export async function positionalRows<R = Record<string, unknown>>(
  client: ClientBase,
  sql: string,
  params: readonly unknown[],
  name?: string,
): Promise<R[]> {
  const values = params as unknown[];
  const config = name ? { name, text: positional(sql), values } : { text: positional(sql), values };
  return (await callbackQuery(client, config)).rows as R[];
}

/** The tail of each wallet's in-process queue; an entry is removed when its last waiter finishes. */
const localQueues = new Map<string, Promise<void>>();

/** A caller's turn in its wallet's in-process queue (enterWalletTurn). */
export interface WalletTurn {
  /** Resolves when every earlier caller's turn ended; undefined when there was none (the turn has come). */
  ready: Promise<void> | undefined;
  /** Ends this turn (once, in a `finally`). */
  leave(): void;
}

/**
 * Takes a turn after every earlier caller for the same wallet in this process (await `ready` when set).
 * Only one request per wallet and process then holds a pooled connection while it waits for the advisory
 * lock, so a hot wallet cannot fill the pool with lock waiters and starve the statements that record
 * signatures.
 */
export function enterWalletTurn(walletId: string): WalletTurn {
  const previous = localQueues.get(walletId);
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous ? previous.then(() => mine) : mine;
  localQueues.set(walletId, tail);
  return {
    ready: previous,
    leave: () => {
      release();
      if (localQueues.get(walletId) === tail) localQueues.delete(walletId);
    },
  };
}

/** Runs `fn` in the wallet's turn (enterWalletTurn). */
async function inWalletQueue<T>(walletId: string, fn: () => Promise<T>): Promise<T> {
  const turn = enterWalletTurn(walletId);
  if (turn.ready) await turn.ready;
  try {
    return await fn();
  } finally {
    turn.leave();
  }
}

/**
 * Each wallet's newest decision write handed to a group-commit writer (../pay/store/reservation-writer.ts) and not yet
 * settled. Writes are committed in the order they were handed over, so this one settling means every earlier
 * write of the wallet settled too. A read of the wallet's state waits for it, or it would miss those writes.
 */
const pendingWrites = new Map<string, Promise<void>>();

const ignore = () => undefined;

/** Records `written` as the wallet's newest decision write handed over (see writesSettled). */
export function trackWrite(walletId: string, written: Promise<void>): void {
  const settled = written.then(ignore, ignore);
  pendingWrites.set(walletId, settled);
  void settled.then(() => {
    if (pendingWrites.get(walletId) === settled) pendingWrites.delete(walletId);
  });
}

/** Resolves once every decision write of the wallet handed over in this process committed or failed. */
export function writesSettled(walletId: string): Promise<void> | undefined {
  return pendingWrites.get(walletId);
}

/** A statement run in the same round trip as BEGIN and the lock, right after the lock is held. */
export interface OpeningQuery {
  sql: string;
  params: ReadonlyArray<unknown>;
  /** Locked transactions only: more statements for that round trip, run in order after this one (their rows: `fn`'s third argument). */
  then?: ReadonlyArray<{ sql: string; params: ReadonlyArray<unknown> }>;
}

/** `?` → the parameter as a quoted literal (pg's escapeLiteral), so the statement can ride a simple query. */
function inlineParams(client: PoolClient, query: OpeningQuery): string {
  let i = 0;
  return query.sql.replace(/\?/g, () => {
    const v = query.params[i++];
    if (v === undefined) throw new Error('opening query: fewer parameters than placeholders');
    if (v === null) return 'NULL';
    if (v instanceof Date) return client.escapeLiteral(v.toISOString());
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean')
      return client.escapeLiteral(String(v));
    throw new Error(`opening query: parameter ${i} has an unsupported type (${typeof v})`);
  });
}

/**
 * Optimistic: reads the opening query as a prepared statement (no transaction, no lock) and gives `fn` a
 * `WalletTx` whose single statement runs in autocommit. A second statement is refused: two autocommit
 * writes would not be atomic together.
 */
export async function withWalletSnapshot<T>(
  knex: Knex,
  walletId: string,
  name: string,
  fn: (tx: WalletTx, openingRows: Record<string, unknown>[]) => Promise<T>,
  opening: () => OpeningQuery,
  /** Called when this request's turn has come: rows known to be current (the read is skipped), or undefined. */
  remembered?: () => Record<string, unknown>[] | undefined,
): Promise<T> {
  return inWalletQueue(walletId, async () => {
    // This statement commits on its own: it must come after the wallet's queued group-commit writes.
    await writesSettled(walletId);
    const known = remembered?.();
    const query = known ? undefined : opening();
    return withPooledClient(knex, async (client) => {
      const rows = known ?? (await positionalRows(client, query!.sql, query!.params, name));
      let used = false;
      const tx: WalletTx = {
        query: (sql, params, statementName) => {
          if (used) throw new Error('withWalletSnapshot: one write statement only (it runs in autocommit)');
          used = true;
          return positionalRows(client, sql, params, statementName);
        },
      };
      return fn(tx, rows);
    });
  });
}

/**
 * Group-commit variant of `withWalletSnapshot`: in the wallet's turn, `fn` decides on the remembered state
 * (which may include this wallet's writes still queued in the writer) or on a fresh read (taken after those
 * writes settled), hands its write to the writer and returns it through `track`; the turn ends as soon as
 * `fn` returns, so the wallet's next payment decides while this write is still on its way. `fn` must not
 * await between deciding and handing the write over.
 */
export async function withWalletDecision<T>(
  knex: Knex,
  walletId: string,
  name: string,
  fn: (openingRows: Record<string, unknown>[], track: (written: Promise<void>) => void) => T,
  opening: () => OpeningQuery,
  remembered: () => Record<string, unknown>[] | undefined,
): Promise<T> {
  return inWalletQueue(walletId, async () => {
    let rows = remembered();
    if (!rows) {
      await writesSettled(walletId);
      rows = remembered();
      if (!rows) {
        const query = opening();
        rows = await runStatement(knex, query.sql, [...query.params], name);
      }
    }
    return fn(rows, (written) => trackWrite(walletId, written));
  });
}

export async function withWalletTransaction<T>(
  knex: Knex,
  walletId: string,
  fn: (tx: WalletTx, openingRows: Record<string, unknown>[], thenRows: Record<string, unknown>[][]) => Promise<T>,
  opening?: () => OpeningQuery,
): Promise<T> {
  // `opening` is built once this request's turn in the wallet queue has come (so a clock read there is not
  // stale by the time spent queued behind earlier payments).
  return inWalletQueue(walletId, async () => {
    await writesSettled(walletId);
    return lockedTransaction(knex, walletId, fn, opening?.());
  });
}

async function lockedTransaction<T>(
  knex: Knex,
  walletId: string,
  fn: (tx: WalletTx, openingRows: Record<string, unknown>[], thenRows: Record<string, unknown>[][]) => Promise<T>,
  opening: OpeningQuery | undefined,
): Promise<T> {
  const client = (await knex.client.acquireConnection()) as PoolClient;
  let broken = false;
  try {
    // The key is a bigint computed here, so it is safe to inline; BEGIN, the lock and the opening read (its
    // parameters quoted by escapeLiteral) share one round trip: fewer round trips inside the lock is what
    // bounds a hot wallet's throughput. Whatever fails after BEGIN went out — the lock, the opening read,
    // `fn`, COMMIT — is rolled back before the connection goes back to the pool, so the next user never
    // inherits an open or aborted transaction.
    const lock = `BEGIN; SELECT pg_advisory_xact_lock(${walletLockKey(walletId).toString()})`;
    try {
      let openingRows: Record<string, unknown>[] = [];
      let thenRows: Record<string, unknown>[][] = [];
      if (opening) {
        const statements = [opening, ...(opening.then ?? [])].map((q) => inlineParams(client, q));
        const results = (await callbackQuery(client, {
          text: `${lock}; ${statements.join('; ')}`,
        })) as unknown as Array<{
          rows: Record<string, unknown>[];
        }>;
        openingRows = results[2]!.rows;
        thenRows = results.slice(3).map((r) => r.rows);
      } else {
        await callbackQuery(client, { text: lock });
      }
      const tx: WalletTx = {
        query: (sql, params, name) => positionalRows(client, sql, params, name),
      };
      const result = await fn(tx, openingRows, thenRows);
      await callbackQuery(client, { text: 'COMMIT' });
      return result;
    } catch (err) {
      try {
        await callbackQuery(client, { text: 'ROLLBACK' });
      } catch {
        broken = true;
      }
      throw err;
    }
  } finally {
    if (broken) discardPooled(client, 'ROLLBACK failed');
    await knex.client.releaseConnection(client);
  }
}

/**
 * One prepared statement outside any explicit transaction (it commits on its own), on a raw pooled
 * connection: the pay path's lock-free second step, where the signature is recorded before it is released.
 */
export async function runStatement<R = Record<string, unknown>>(
  knex: Knex,
  sql: string,
  params: unknown[],
  name: string,
): Promise<R[]> {
  return withPooledClient(knex, (client) => positionalRows<R>(client, sql, params, name));
}

/**
 * Marks a pooled connection that may be broken so that the pool destroys it instead of handing it out again
 * (knex's validation refuses a `__knex__disposed` connection). It must still be released: destroying it
 * directly would leave its pool slot taken for good, and after as many broken connections as the pool holds
 * every request would wait for a connection until it timed out.
 */
function discardPooled(client: PoolClient, reason: unknown): void {
  const c = client as PoolClient & { __knex__disposed?: unknown };
  c.__knex__disposed ??= reason;
}

/** Runs `fn` on a pooled connection in autocommit; one that may be broken goes back marked, to be destroyed by the pool. */
export async function withPooledClient<T>(knex: Knex, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = (await knex.client.acquireConnection()) as PoolClient;
  try {
    return await fn(client);
  } catch (err) {
    if (!connectionUsableAfter(err)) discardPooled(client, err);
    throw err;
  } finally {
    await knex.client.releaseConnection(client);
  }
}

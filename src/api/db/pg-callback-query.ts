/**
 * One statement on a pg client through pg's callback form, as a promise.
 *
 * Why not pg's own promise (`client.query(config)` without a callback): a query sent that way keeps its
 * parameters alive through two young-generation collections, so V8 promotes them to the old generation and
 * only a full collection frees them; the same query sent with a callback does not. Measured with
 * `--trace-gc-nvp` (pg 8.23, Node 20; `npm run bench:pg-promotion`): 400 inserts a second, one at a time, each
 * with a 3 KB JSON parameter, promoted about 1,100 KiB a second through the promise form and 9 KiB through the
 * callback form. On the pay path's decision write that was most of what the API promoted per payment
 * (docs/performance.md, "What the API promotes, and when V8 collects it").
 *
 * Defends: the old generation from filling with parameters of finished statements.
 */
import type { ClientBase, QueryConfig, QueryResult, QueryResultRow } from 'pg';

/** Runs `config` on `client` (pg's callback form); resolves with its result, rejects with pg's error. */
export function callbackQuery<R extends QueryResultRow = Record<string, unknown>>(
  client: ClientBase,
  config: QueryConfig,
): Promise<QueryResult<R>> {
  return new Promise((resolve, reject) => {
    client.query<R>(config, (err: Error | undefined, result: QueryResult<R>) => (err ? reject(err) : resolve(result)));
  });
}

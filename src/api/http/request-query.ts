/**
 * A request's query string as the route schemas read it: every key an own property of an object with no
 * prototype, a repeated key the array of its values in order, each key and value decoded by URLSearchParams.
 *
 * Defends the rule that a query key is a key like any other, so a strict query schema refuses an unknown one.
 * Koa's `queryOf(ctx)` (3.2) assigns keys onto a plain object, and caches it under the whole query string on
 * another: `?__proto__=1` is swallowed by the prototype setter and the query reads as if the key were absent,
 * and `?constructor` answers the function every object inherits. The API reads no query through `queryOf(ctx)`
 * (eslint.config.js); the hostile-input suites send these names to every query route.
 */
export type RequestQuery = Record<string, string | string[]>;

export function queryOf(ctx: { readonly querystring: string }): RequestQuery {
  const query: RequestQuery = Object.create(null) as RequestQuery;
  for (const [key, value] of new URLSearchParams(ctx.querystring)) {
    const prior = query[key];
    if (prior === undefined) query[key] = value;
    else if (Array.isArray(prior)) prior.push(value);
    else query[key] = [prior, value];
  }
  return query;
}

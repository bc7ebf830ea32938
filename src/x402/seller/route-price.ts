/**
 * The price of a request path. `route_prices` are found by `routePriceKey` (decoded, lower-cased, slashes
 * collapsed), so no spelling of a priced route escapes its price; but a route's own price applies as is only to
 * the path spelled as the seller configured it (byte for byte, or its non-ASCII characters percent-encoded as a
 * client sends them). Any other spelling that folds to the same key — `/reports/SAMPLE`, `/reports/sample/`,
 * `/reports/s%41mple` for `/reports/sample` — pays the dearer of that route price and the default price: a
 * case-sensitive or trailing-slash-strict origin may serve it as another resource than the one the seller made
 * cheap, so it is never cheaper than the default. A path without a route price pays the default. A path already
 * keyed is remembered (at most 1,024 of them; the memory is emptied when full), since the key is computed again
 * for every request to the same route.
 *
 * Defends against: two spellings of one path getting two prices, one of them below the default (one key
 * function for the configuration and the request; the cheaper price only for the configured spelling).
 * Does not defend against: anything about the path itself — a dot segment, an escaped separator, a `;` parameter
 * is refused before any price is looked up by the path rule both callers apply first (./request-path-rule.ts: the
 * gate, and the Koa middleware through ./refused-path.ts); a seller whose origin serves the configured spelling of
 * a cheap route as a dear resource (the seller's setting).
 */
import { routePriceKey, type ResolvedX402Config } from './seller-options.js';

const MAX_REMEMBERED_PATHS = 1024;
const keys = new Map<string, string>();

/** `routePriceKey(path)`, remembered. */
function keyOf(path: string): string {
  let key = keys.get(path);
  if (key === undefined) {
    if (keys.size >= MAX_REMEMBERED_PATHS) keys.clear();
    key = routePriceKey(path);
    keys.set(path, key);
  }
  return key;
}

export function priceOf(config: ResolvedX402Config, path: string): bigint {
  if (config.routePrices.size === 0) return config.priceMicro;
  const key = keyOf(path);
  const micro = config.routePrices.get(key);
  if (micro === undefined) return config.priceMicro;
  if (config.routePriceSpellings.get(key)?.includes(path)) return micro;
  return micro > config.priceMicro ? micro : config.priceMicro;
}

/**
 * The price of a request path: the route's own price (`route_prices`, keyed by `routePriceKey`: decoded,
 * lower-cased, slashes collapsed) or the default. A path already keyed is remembered (at most 1,024 of them;
 * the memory is emptied when full), since the key is computed again for every request to the same route.
 *
 * Defends against: two spellings of one path getting two prices (one key function for the configuration and
 * the request). Does not defend against: anything about the path itself (the gate's path rule, request-target.ts).
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
  return config.routePrices.get(keyOf(path)) ?? config.priceMicro;
}

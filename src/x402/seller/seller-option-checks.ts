/**
 * The checks of the seller middleware's options (./x402-koa-options.ts) that ./seller-options.ts runs, a group
 * of options each: every check appends what is wrong to `problems` (so that one `X402ConfigError` lists them all)
 * and returns the value, or a placeholder when it is wrong. The same defences as ./seller-options.ts describes;
 * no I/O.
 */
import { getAddress, isAddress } from 'viem';
import { isUsdString, parseUsd } from '../../../policy/money.js';
import { ChainRegistry } from '../../shared/chain-registry.js';
import type { FacilitatorLike } from '../facilitator-client.js';
import type { X402KoaOptions } from './x402-koa-options.js';

type Env = Readonly<Record<string, string | undefined>>;

const builtInChains = ChainRegistry.fromConfig(undefined);

/**
 * The key a request path is priced by: percent-decoded, lower-cased, duplicate and trailing slashes removed.
 * Routers commonly match case-insensitively and ignore a trailing slash, so pricing must not be cheaper to
 * reach by spelling a path differently. Dot segments are not resolved here: a request path holding one (plain or
 * escaped), an escaped separator or an empty segment never reaches this key — the path rule refuses it first
 * (./request-path-rule.ts, in the gate and in the Koa middleware).
 */
export function routePriceKey(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // keep the raw spelling; it cannot match a configured key anyway
  }
  const collapsed = decoded.toLowerCase().replace(/\/{2,}/g, '/');
  return collapsed.length > 1 ? collapsed.replace(/\/+$/, '') || '/' : collapsed;
}

export function checkAddress(
  label: string,
  value: unknown,
  problems: string[],
  options: { allowZero?: boolean } = {},
): `0x${string}` | undefined {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(value)) {
    problems.push(`${label} must be a 0x-prefixed 20-byte hex address`);
    return undefined;
  }
  const mixed = !/^0x[0-9a-f]{40}$/.test(value) && !/^0x[0-9A-F]{40}$/.test(value);
  if (mixed && !isAddress(value, { strict: true })) {
    problems.push(`${label} has a wrong EIP-55 checksum`);
    return undefined;
  }
  if (!options.allowZero && /^0x0{40}$/.test(value)) {
    problems.push(`${label} must not be the zero address`);
    return undefined;
  }
  return getAddress(value.toLowerCase());
}

export function checkHttpUrl(label: string, value: string, problems: string[]): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`${label} must be an absolute http(s) URL`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${label} must be an http(s) URL`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`${label} must not carry credentials`);
    return undefined;
  }
  return value.replace(/\/+$/, '');
}

export function positiveInt(label: string, value: unknown, fallback: number, max: number, problems: string[]): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    problems.push(`${label} must be an integer from 1 to ${max}`);
    return fallback;
  }
  return value;
}

export const nonEmpty = (v: string | undefined): string | undefined => (v === undefined || v === '' ? undefined : v);

/** `token`: a service PAT (a removed master key is named as such). */
export function checkToken(options: X402KoaOptions, problems: string[]): string {
  const token = options.token;
  if (typeof token !== 'string' || token === '') problems.push('token (a service PAT) is required');
  else if (/^xx_(live|treasury)_sk_/.test(token))
    problems.push('token is a removed master key; create a service PAT with `xx service pat create`');
  else if (!/^xx_pat_[A-Za-z0-9_-]{16,256}$/.test(token)) problems.push('token must be a service PAT (xx_pat_…)');
  return token;
}

/** `price`: a USD decimal string, in micro-USD. */
export function checkPrice(options: X402KoaOptions, problems: string[]): bigint {
  let priceMicro = 0n;
  if (options.price === undefined || options.price === null) problems.push('price (USD decimal string) is required');
  else if (!isUsdString(options.price))
    problems.push(
      `price must be a USD decimal string with at most 6 decimals, e.g. "0.01" (got ${JSON.stringify(String(options.price)).slice(0, 40)})`,
    );
  else priceMicro = parseUsd(options.price);
  return priceMicro;
}

/** `path` with each non-ASCII character percent-encoded as a URL parser sends it (a lone surrogate left as is). */
function asSent(path: string): string {
  let out = '';
  for (const ch of path) {
    if (ch.charCodeAt(0) < 0x80) out += ch;
    else
      try {
        out += encodeURIComponent(ch);
      } catch {
        out += ch;
      }
  }
  return out;
}

/**
 * `route_prices`: absolute paths (keyed as `routePriceKey` spells them, no two alike) to USD strings. `prices` by
 * key, and by key the `spellings` a price applies to as is (./route-price.ts): the path as configured and, when it
 * holds non-ASCII characters, as a client sends it (UTF-8, percent-encoded, upper-case hex).
 */
export function checkRoutePrices(
  options: X402KoaOptions,
  problems: string[],
): { prices: Map<string, bigint>; spellings: Map<string, readonly string[]> } {
  const routePrices = new Map<string, bigint>();
  const spellings = new Map<string, readonly string[]>();
  if (options.route_prices !== undefined) {
    if (
      options.route_prices === null ||
      typeof options.route_prices !== 'object' ||
      Array.isArray(options.route_prices)
    )
      problems.push('route_prices must be an object mapping paths to USD strings');
    else {
      for (const [path, value] of Object.entries(options.route_prices)) {
        if (!/^\/[^\s?#]*$/.test(path) || path.length > 512) {
          problems.push(`route_prices key ${JSON.stringify(path).slice(0, 60)} must be an absolute path without query`);
          continue;
        }
        if (value !== '' && !isUsdString(value)) {
          problems.push(`route_prices[${JSON.stringify(path)}] must be a USD decimal string, "0" or ""`);
          continue;
        }
        const key = routePriceKey(path);
        if (routePrices.has(key)) problems.push(`route_prices has two keys for the same path ${JSON.stringify(path)}`);
        routePrices.set(key, value === '' ? 0n : parseUsd(value));
        const sent = asSent(path);
        spellings.set(key, Object.freeze(sent === path ? [path] : [path, sent]));
      }
    }
  }
  return { prices: routePrices, spellings };
}

/** `schemes`: "exact" and/or "upto", each once. */
export function checkSchemes(options: X402KoaOptions, problems: string[]): ('exact' | 'upto')[] {
  const schemesRaw = options.schemes ?? ['exact'];
  const schemes: ('exact' | 'upto')[] = [];
  if (!Array.isArray(schemesRaw) || schemesRaw.length === 0)
    problems.push('schemes must be a non-empty list of "exact" and/or "upto"');
  else {
    for (const s of schemesRaw) {
      if (s !== 'exact' && s !== 'upto')
        problems.push(`schemes: ${JSON.stringify(s)} is not supported (allowed: "exact", "upto")`);
      else if (!schemes.includes(s)) schemes.push(s);
    }
  }
  return schemes;
}

/** The facilitator: an object or a URL (option, else env FACILITATOR_URL), and its address when `upto` is offered. */
export function checkFacilitator(
  options: X402KoaOptions,
  env: Env,
  schemes: readonly ('exact' | 'upto')[],
  problems: string[],
): { facilitatorAddress: `0x${string}` | undefined; facilitatorUrl: string | undefined } {
  let facilitatorAddress: `0x${string}` | undefined;
  if (nonEmpty(options.facilitator_address) !== undefined)
    facilitatorAddress = checkAddress('facilitator_address', options.facilitator_address, problems);
  if (schemes.includes('upto') && nonEmpty(options.facilitator_address) === undefined)
    problems.push('facilitator_address is required when "upto" is in schemes');

  if (options.facilitator !== undefined) {
    const f = options.facilitator as Partial<FacilitatorLike> | null;
    if (f === null || typeof f !== 'object' || typeof f.verify !== 'function' || typeof f.settle !== 'function')
      problems.push('facilitator must be an object with verify() and settle() methods');
    if (nonEmpty(options.facilitator_url) !== undefined) problems.push('give facilitator or facilitator_url, not both');
  }
  const facilitatorRaw =
    options.facilitator !== undefined
      ? undefined
      : (nonEmpty(options.facilitator_url) ?? nonEmpty(env.FACILITATOR_URL));
  const facilitatorUrl =
    facilitatorRaw === undefined ? undefined : checkHttpUrl('facilitator_url', facilitatorRaw, problems);
  return { facilitatorAddress, facilitatorUrl };
}

/** The network and the token priced in: the network's built-in USDC unless all three asset options are given. */
export function checkAsset(options: X402KoaOptions, problems: string[]) {
  const network = options.network ?? 'eip155:84532';
  const chain = typeof network === 'string' ? builtInChains.resolve(network) : undefined;
  if (typeof network !== 'string' || !/^eip155:[1-9][0-9]{0,15}$/.test(network))
    problems.push('network must be a CAIP-2 EVM id such as eip155:84532');
  else if (
    !chain &&
    (options.asset === undefined || options.asset_name === undefined || options.asset_version === undefined)
  ) {
    problems.push(`network ${network} has no built-in USDC; set asset, asset_name and asset_version`);
  }
  const asset = options.asset !== undefined ? checkAddress('asset', options.asset, problems) : chain?.usdc;
  const assetName = options.asset_name ?? chain?.usdcName;
  const assetVersion = options.asset_version ?? chain?.usdcVersion;
  if (
    options.asset_name !== undefined &&
    (typeof options.asset_name !== 'string' || options.asset_name.length === 0 || options.asset_name.length > 64)
  )
    problems.push('asset_name must be 1 to 64 characters');
  if (
    options.asset_version !== undefined &&
    (typeof options.asset_version !== 'string' ||
      options.asset_version.length === 0 ||
      options.asset_version.length > 16)
  )
    problems.push('asset_version must be 1 to 16 characters');
  return { network, asset, assetName, assetVersion };
}

/** What the 402 describes the resource as (and the `fetch` option's type). */
export function checkDescription(options: X402KoaOptions, problems: string[]) {
  const description = options.description ?? '';
  if (typeof description !== 'string' || description.length > 1024)
    problems.push('description must be at most 1024 characters');
  const mimeType = options.mime_type ?? 'application/json';
  if (typeof mimeType !== 'string' || mimeType.length > 256) problems.push('mime_type must be at most 256 characters');
  if (options.fetch !== undefined && typeof options.fetch !== 'function') problems.push('fetch must be a function');
  return { description, mimeType };
}

/** `ledger_retry_delays_ms`: at most 10 delays of 0 to 600000 ms. */
export function checkRetryDelays(options: X402KoaOptions, problems: string[]): readonly number[] {
  const retry = options.ledger_retry_delays_ms ?? [500, 2000, 8000];
  if (
    !Array.isArray(retry) ||
    retry.length > 10 ||
    retry.some((d) => typeof d !== 'number' || !(d >= 0) || d > 600_000)
  )
    problems.push('ledger_retry_delays_ms must be at most 10 delays of 0 to 600000 ms');
  return retry;
}

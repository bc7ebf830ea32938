/**
 * The default transport of bounded-fetch.ts: one call over undici's `request` through a keep-alive pool shared by
 * the process (the facilitator's verify and settle, the platform's seller check, ledger batches and payment-id
 * calls), instead of the global `fetch`. Same client library as `fetch`, without the WHATWG `Request`, `Headers`,
 * `Response` and stream objects per call: a 100-row ledger batch over loopback cost 458 µs of the seller's CPU
 * through `fetch` and 159 µs through `request` on Node 24 (771 and 259 µs on Node 20) — and a seller with an
 * HTTP facilitator makes two such calls per paid request (docs/performance.md, "The seller's outbound calls").
 * A caller that passes its own `fetch` (tests, a proxy, a custom agent) keeps it; this file is not used then.
 *
 * Defends, as bounded-fetch.ts promises: a peer holding a buyer's request (one deadline over connect, headers and
 * body: the abort signal stops the body's read too); a huge reply (a declared length over the cap is refused
 * before any byte is read, and the read stops at the cap); a redirect being followed (undici's `request` follows
 * none; a 3xx is answered as a failure and its body discarded).
 * Does not defend: a peer that answers promptly with wrong content (callers parse with schemas).
 */
import type { Dispatcher } from 'undici';
import { readCappedText } from './capped-text.js';

export interface PooledCall {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
  maxBytes: number;
}

export type PooledReply =
  { kind: 'reply'; status: number; text: string } | { kind: 'too_large' } | { kind: 'redirect'; status: number };

type Undici = typeof import('undici');
interface Pool {
  dispatcher: Dispatcher;
  request: Undici['request'];
}

/** The proxy settings a pool was made for: Node's own `fetch` honours them only with NODE_USE_ENV_PROXY=1. */
function proxySettings(): string | undefined {
  const env = process.env;
  if (env.NODE_USE_ENV_PROXY !== '1') return undefined;
  return [env.HTTP_PROXY ?? env.http_proxy, env.HTTPS_PROXY ?? env.https_proxy, env.NO_PROXY ?? env.no_proxy].join(
    '\n',
  );
}

/**
 * undici and the pools, made at the first call: a process that never calls out (the CLI, which loads the x402
 * codecs) never loads undici. Idle keep-alive sockets close after 4 s (undici's default) or a server's shorter
 * hint. With NODE_USE_ENV_PROXY=1 (as for Node's `fetch`), calls go through HTTP_PROXY / HTTPS_PROXY, NO_PROXY
 * excepted (undici's `EnvHttpProxyAgent`); one pool is kept per proxy setting seen.
 */
const pools = new Map<string, Promise<Pool>>();
function poolFor(settings: string | undefined): Promise<Pool> {
  const key = settings ?? '';
  let pool = pools.get(key);
  if (!pool) {
    const keepAlive = { keepAliveTimeout: 4_000, keepAliveMaxTimeout: 60_000 };
    pool = import('undici').then(({ Agent, EnvHttpProxyAgent, request }) => ({
      dispatcher: settings === undefined ? new Agent(keepAlive) : new EnvHttpProxyAgent(keepAlive),
      request,
    }));
    pools.set(key, pool);
  }
  return pool;
}

/** One call; throws what undici throws (a refused connection, an abort), which bounded-fetch.ts turns into a cause. */
export async function pooledRequest(call: PooledCall): Promise<PooledReply> {
  const { dispatcher, request } = await poolFor(proxySettings());
  const { statusCode, headers, body } = await request(call.url, {
    method: call.method,
    headers: call.headers,
    body: call.body,
    signal: call.signal,
    dispatcher,
  });
  if (statusCode >= 300 && statusCode < 400) {
    await body.dump().catch(() => undefined);
    return { kind: 'redirect', status: statusCode };
  }
  const declared = Number(headers['content-length']);
  if (Number.isFinite(declared) && declared > call.maxBytes) {
    body.destroy();
    return { kind: 'too_large' };
  }
  const text = await readCappedText(body, call.maxBytes);
  return text === undefined ? { kind: 'too_large' } : { kind: 'reply', status: statusCode, text };
}

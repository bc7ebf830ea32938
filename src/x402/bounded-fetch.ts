/**
 * One outbound JSON call with a deadline that covers the whole exchange (connect, headers and body), a cap on
 * the reply size, and redirects refused. Used for the facilitator and the platform: through the caller's `fetch`
 * when it gives one, else through the process's keep-alive pool (./pooled-request.ts, the cheaper default).
 *
 * Defends against: a slow or hanging peer holding a buyer's request (the deadline aborts it); a huge reply
 * (read at most `maxBytes`); a redirect silently turning a POST into a GET to some other host whose empty 2xx
 * could read as success (x402 issue #605) — 3xx is returned as a failure, never followed.
 * Does not defend against: a peer that answers promptly with wrong content — callers validate with schemas.
 */
import { readCappedText } from './capped-text.js';
import { pooledRequest, type PooledCall, type PooledReply } from './pooled-request.js';
import { parseJsonSafely } from './safe-json.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export type BoundedFetchResult = { kind: 'reply'; status: number; json: unknown } | { kind: 'failed'; cause: string };

export interface BoundedFetchOptions {
  /** The caller's own `fetch` (tests, a proxy); undefined: the keep-alive pool of ./pooled-request.ts. */
  fetch: FetchLike | undefined;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxBytes?: number;
}

/** Through the caller's `fetch`, answered in the pool's terms (./pooled-request.ts), so both read alike below. */
async function viaFetch(doFetch: FetchLike, call: PooledCall): Promise<PooledReply> {
  const response = await doFetch(call.url, {
    method: call.method,
    headers: call.headers,
    ...(call.body !== undefined ? { body: call.body } : {}),
    redirect: 'manual',
    signal: call.signal,
  });
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'redirect', status: response.status };
  }
  const text = response.body ? await readCappedText(response.body, call.maxBytes) : '';
  return text === undefined ? { kind: 'too_large' } : { kind: 'reply', status: response.status, text };
}

/** Performs the call; never throws. A reply whose body is not JSON has `json: undefined`. */
export async function boundedFetchJson(options: BoundedFetchOptions): Promise<BoundedFetchResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );
  const body = options.body !== undefined ? JSON.stringify(options.body) : undefined;
  const call: PooledCall = {
    method: options.method,
    url: options.url,
    headers: {
      accept: 'application/json',
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    body,
    signal: controller.signal,
    maxBytes: options.maxBytes ?? 64 * 1024,
  };
  try {
    const reply = options.fetch ? await viaFetch(options.fetch, call) : await pooledRequest(call);
    if (reply.kind === 'redirect') return { kind: 'failed', cause: `redirect (${reply.status}) refused` };
    if (reply.kind === 'too_large') return { kind: 'failed', cause: `reply larger than ${call.maxBytes} bytes` };
    let json: unknown;
    try {
      json = reply.text === '' ? undefined : parseJsonSafely(reply.text);
    } catch {
      json = undefined;
    }
    return { kind: 'reply', status: reply.status, json };
  } catch (err) {
    if (controller.signal.aborted) return { kind: 'failed', cause: `timed out after ${options.timeoutMs} ms` };
    const cause =
      err instanceof Error
        ? err.cause instanceof Error
          ? `${err.message}: ${err.cause.message}`
          : err.message
        : String(err);
    return { kind: 'failed', cause };
  } finally {
    clearTimeout(timer);
  }
}

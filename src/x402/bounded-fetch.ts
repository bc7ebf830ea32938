/**
 * One outbound JSON call with a deadline that covers the whole exchange (connect, headers and body), a cap on
 * the reply size, and redirects refused. Used for the facilitator and the platform.
 *
 * Defends against: a slow or hanging peer holding a buyer's request (the deadline aborts it); a huge reply
 * (read at most `maxBytes`); a redirect silently turning a POST into a GET to some other host whose empty 2xx
 * could read as success (x402 issue #605) — 3xx is returned as a failure, never followed.
 * Does not defend against: a peer that answers promptly with wrong content — callers validate with schemas.
 */
import { parseJsonSafely } from './safe-json.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export type BoundedFetchResult =
  { kind: 'reply'; status: number; json: unknown; headers: Headers } | { kind: 'failed'; cause: string };

export interface BoundedFetchOptions {
  fetch: FetchLike;
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs: number;
  maxBytes?: number;
}

async function readCapped(response: Response, maxBytes: number): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Performs the call; never throws. A reply whose body is not JSON has `json: undefined`. */
export async function boundedFetchJson(options: BoundedFetchOptions): Promise<BoundedFetchResult> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`timed out after ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );
  try {
    const response = await options.fetch(options.url, {
      method: options.method,
      headers: {
        accept: 'application/json',
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      redirect: 'manual',
      signal: controller.signal,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => undefined);
      return { kind: 'failed', cause: `redirect (${response.status}) refused` };
    }
    const text = await readCapped(response, options.maxBytes ?? 64 * 1024);
    if (text === undefined)
      return { kind: 'failed', cause: `reply larger than ${options.maxBytes ?? 64 * 1024} bytes` };
    let json: unknown;
    try {
      json = text === '' ? undefined : parseJsonSafely(text);
    } catch {
      json = undefined;
    }
    return { kind: 'reply', status: response.status, json, headers: response.headers };
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

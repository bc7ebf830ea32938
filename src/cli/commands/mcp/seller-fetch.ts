/**
 * The fetch the `xx mcp` `pay` tool reaches sellers with (the buyer SDK's `fetch` option): node:http(s) with
 * a `lookup` that vets every address the host resolves to, so the connection goes to a vetted address — no
 * second resolution a rebinding DNS server could answer differently. A host that is an IP literal is vetted
 * as written. Unless `allowPrivate` (`xx mcp --allow-private-targets`, XX_MCP_ALLOW_PRIVATE_TARGETS=1: the
 * sandbox and tests), an address that is not public (./public-address.ts) refuses the request with
 * `target_not_public` before anything is sent. Redirects, when the caller follows them, are followed here
 * hop by hop (at most MAX_REDIRECTS), each hop vetted the same way; only http(s) targets are reached. The
 * answer's `url` is the URL that answered (after redirects), as fetch's is: the buyer SDK pays a 402 only on
 * the origin asked (src/sdk/challenge-origin.ts). The answer is read as sent (identity encoding asked for) and
 * at most MAX_RESPONSE_BYTES of it.
 *
 * Defends: a model, or a page it read, steering the agent's machine into loopback, the LAN or cloud metadata,
 * directly, through DNS or through a redirect; an endless or huge answer filling the process's memory.
 * Does not defend: what a public seller answers (the tool hands it to the model marked as untrusted data).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { CliError } from '../../core/cli-error.js';
import { addressRange, isPublicAddress } from './public-address.js';

export const MAX_REDIRECTS = 5;
export const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
const TIMEOUT_MS = 60_000;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export type SellerFetch = (input: string, init: RequestInit) => Promise<Response>;

export interface SellerFetchOptions {
  /** Let loopback, private and other non-public addresses through (the sandbox and tests only). */
  allowPrivate: boolean;
}

interface Hop {
  url: URL;
  method: string;
  headers: Headers;
  body: string | Uint8Array | undefined;
  signal: AbortSignal | undefined;
}

export function sellerFetch(options: SellerFetchOptions): SellerFetch {
  return async (input, init) => {
    const hop: Hop = {
      url: new URL(input),
      method: (init.method ?? 'GET').toUpperCase(),
      headers: new Headers(init.headers),
      body: init.body as string | Uint8Array | undefined,
      signal: init.signal ?? undefined,
    };
    for (let hops = 0; ; hops++) {
      const res = await requestOnce(hop, options);
      const location = res.headers.get('location');
      if (init.redirect === 'manual' || !REDIRECTS.has(res.status) || !location || hops >= MAX_REDIRECTS)
        return answeredFrom(res, hop.url);
      await res.body?.cancel();
      hop.url = new URL(location, hop.url);
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && hop.method === 'POST')) {
        hop.method = 'GET';
        hop.body = undefined;
        hop.headers.delete('content-type');
      }
    }
  };
}

/** `res` with `url` set to the URL that answered, as fetch sets it (a constructed Response has none). */
function answeredFrom(res: Response, url: URL): Response {
  return Object.defineProperty(res, 'url', { value: url.href, enumerable: true });
}

function targetRefused(url: URL, address: string | undefined): CliError {
  return new CliError({
    code: 'target_not_public',
    userMessage: `${url.host} is not a public address (${address ? addressRange(address) : 'no address'}); pay only reaches public sellers. Do not retry this URL.`,
    details: { host: url.host, ...(address ? { address, range: addressRange(address) } : {}) },
  });
}

/** A `lookup` answering only vetted addresses; the first refusal is kept in `refusal.error`. */
function vettingLookup(url: URL, options: SellerFetchOptions, refusal: { error?: CliError }): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const bad = options.allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
      if (bad || addresses.length === 0) {
        refusal.error = targetRefused(url, bad?.address);
        return callback(refusal.error, '', 0);
      }
      if (lookupOptions.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

function requestOnce(hop: Hop, options: SellerFetchOptions): Promise<Response> {
  const { url } = hop;
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.reject(
      new CliError({ code: 'target_not_public', userMessage: `pay reaches http(s) URLs only, not ${url.protocol}` }),
    );
  const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(literal) !== 0 && !options.allowPrivate && !isPublicAddress(literal))
    return Promise.reject(targetRefused(url, literal));
  const refusal: { error?: CliError } = {};
  const headers = Object.fromEntries(hop.headers);
  headers['accept-encoding'] = 'identity';
  return new Promise<Response>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(
      url,
      {
        method: hop.method,
        headers,
        lookup: vettingLookup(url, options, refusal),
        timeout: TIMEOUT_MS,
        ...(hop.signal ? { signal: hop.signal } : {}),
      },
      (res) => {
        try {
          resolve(toResponse(res, hop.method));
        } catch (err) {
          res.destroy();
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url.host} did not answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err) => reject(refusal.error ?? err));
    req.end(hop.body);
  });
}

/** A web Response over the answer, its body cut at MAX_RESPONSE_BYTES. */
function toResponse(res: http.IncomingMessage, method: string): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new Error(`the seller answered with HTTP status ${status}`);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const noBody = method === 'HEAD' || status === 204 || status === 205 || status === 304;
  if (noBody) res.resume();
  const body = noBody ? null : (Readable.toWeb(Readable.from(capped(res))) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}

async function* capped(res: http.IncomingMessage): AsyncGenerator<Uint8Array> {
  let read = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (read + chunk.length >= MAX_RESPONSE_BYTES) {
      yield chunk.subarray(0, MAX_RESPONSE_BYTES - read);
      res.destroy();
      return;
    }
    read += chunk.length;
    yield chunk;
  }
}

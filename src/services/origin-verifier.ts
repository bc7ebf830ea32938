/**
 * Fetches `<origin>/.well-known/xx-verification.txt` and checks it holds the token we issued.
 *
 * Defends: http(s) only; no redirects followed (a redirect answers `origin_redirect_refused`); 5 s timeout;
 * at most 4 KiB read; the origin's host must not resolve to a loopback, private or link-local address
 * (server-side request forgery into our own network) unless `allowPrivate` — the local sandbox and tests.
 * Does not defend: DNS rebinding between the check and the fetch (the window is one request).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { AppError } from '../errors/app-error.js';

const MAX_BYTES = 4096;
const TIMEOUT_MS = 5000;

function isPrivate(address: string): boolean {
  if (net.isIPv4(address)) {
    const [a, b] = address.split('.').map(Number) as [number, number];
    return a === 10 || a === 127 || a === 0 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127);
  }
  const v6 = address.toLowerCase();
  return v6 === '::1' || v6 === '::' || v6.startsWith('fc') || v6.startsWith('fd') || v6.startsWith('fe80') || v6.startsWith('::ffff:');
}

export async function fetchVerificationFile(origin: string, options: { allowPrivate: boolean }): Promise<string> {
  return guardedFetchText(new URL('/.well-known/xx-verification.txt', origin), { ...options, maxBytes: MAX_BYTES, notFound: 'well_known_not_found' });
}

/** GET a URL under the rules above; `notFound` names the error code for 404/410. */
export async function guardedFetchText(url: URL, options: { allowPrivate: boolean; maxBytes: number; notFound: 'well_known_not_found' | 'openapi_not_found' }): Promise<string> {
  const origin = url.origin;
  const MAX_BYTES = options.maxBytes;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AppError('invalid_request', { message: 'The origin must be http(s).' });
  if (!options.allowPrivate) {
    const addresses = await lookup(url.hostname, { all: true }).catch(() => []);
    if (addresses.length === 0) throw new AppError('origin_unreachable', { fields: { origin } });
    if (addresses.some((a) => isPrivate(a.address))) throw new AppError('origin_not_public', { fields: { origin } });
  }
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS), headers: { 'user-agent': 'treasury-origin-verifier/1' } });
  } catch {
    throw new AppError('origin_unreachable', { fields: { origin } });
  }
  if (res.status >= 300 && res.status < 400) throw new AppError('origin_redirect_refused', { fields: { origin, location: res.headers.get('location') } });
  if (res.status === 404 || res.status === 410) throw new AppError(options.notFound, { fields: { url: url.toString() } });
  if (!res.ok || !res.body) throw new AppError('origin_unreachable', { fields: { origin, status: res.status } });
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw new AppError('invalid_request', { message: `The document at ${url.pathname} is larger than ${MAX_BYTES >= 1024 ? `${MAX_BYTES / 1024} KiB` : `${MAX_BYTES} bytes`}.` });
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

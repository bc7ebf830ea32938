/**
 * Fetches `<origin>/.well-known/xx-verification.txt` (and, through `guardedFetchText`, a seller's OpenAPI
 * document) and turns the outcome into the API's error codes.
 *
 * Relies on src/api/net/vetted-fetch.ts for the outbound rules (which addresses and ports it connects to,
 * redirects, the deadline, at most `maxBytes` read), passing it the operator's `allowPrivate` and ports.
 * Defends, here: an error that echoes what the remote side answered — each refusal or status becomes a code,
 * the URL the tenant gave us and our own limit; never a body, header, Location or status line.
 * Holds the one token rule every proof of control uses (`servesToken`: a seller's origin, a gate's URL and its base
 * domain, at the first proof and at every re-check of src/api/sellers/proofs/): a line of the file, trimmed of its
 * surrounding white space, equal to the token — never a word inside a longer line.
 * Does not defend: the content of a 2xx document (callers treat it as untrusted input).
 */
import { AppError } from '../../errors/app-error.js';
import { OutboundError, vettedGet, type HostResolver, type OutboundRefusal } from '../../net/vetted-fetch.js';

const MAX_BYTES = 4096;

export interface OriginFetchOptions {
  allowPrivate: boolean;
  allowedPorts?: readonly number[] | undefined;
  resolveHost?: HostResolver | undefined;
}

export async function fetchVerificationFile(origin: string, options: OriginFetchOptions): Promise<string> {
  return guardedFetchText(new URL('/.well-known/xx-verification.txt', origin), {
    ...options,
    maxBytes: MAX_BYTES,
    notFound: 'well_known_not_found',
  });
}

/**
 * Whether `body` serves `token`: one of its lines (LF or CRLF), trimmed of surrounding white space, is exactly the
 * token. A file that only mentions it inside a sentence (`see xx-verify-… here`), as a page quoting it would, does
 * not.
 */
export function servesToken(body: string, token: string): boolean {
  return body.split('\n').some((line) => line.trim() === token);
}

function limitText(maxBytes: number): string {
  return maxBytes >= 1024 ? `${maxBytes / 1024} KiB` : `${maxBytes} bytes`;
}

function refusal(reason: OutboundRefusal, url: URL, maxBytes: number): AppError {
  const origin = url.origin;
  switch (reason) {
    case 'scheme_refused':
      return new AppError('invalid_request', { message: 'The origin must be http(s), without credentials.' });
    case 'port_refused':
      return new AppError('origin_port_refused', { fields: { origin } });
    case 'address_refused':
      return new AppError('origin_not_public', { fields: { origin } });
    case 'redirect_refused':
      return new AppError('origin_redirect_refused', { fields: { origin } });
    case 'too_large':
      return new AppError('origin_response_too_large', {
        message: `The document at ${url.pathname} is larger than ${limitText(maxBytes)}.`,
        fields: { origin, max_bytes: maxBytes },
      });
    case 'unresolvable':
    case 'unreachable':
    case 'timeout':
      return new AppError('origin_unreachable', { fields: { origin } });
  }
}

/** GET a URL under the rules above; `notFound` names the error code for 404/410. */
export async function guardedFetchText(
  url: URL,
  options: OriginFetchOptions & {
    maxBytes: number;
    notFound: 'well_known_not_found' | 'openapi_not_found' | 'gate_verification_not_found';
  },
): Promise<string> {
  let res;
  try {
    res = await vettedGet(url, {
      allowPrivate: options.allowPrivate,
      allowedPorts: options.allowedPorts,
      resolveHost: options.resolveHost,
      maxBytes: options.maxBytes,
      userAgent: 'treasury-origin-verifier/1',
    });
  } catch (err) {
    if (err instanceof OutboundError) throw refusal(err.reason, url, options.maxBytes);
    throw err;
  }
  if (res.status === 404 || res.status === 410)
    throw new AppError(options.notFound, { fields: { url: url.toString() } });
  if (res.status < 200 || res.status >= 300)
    throw new AppError('origin_unreachable', { fields: { origin: url.origin } });
  return res.body.toString('utf8');
}

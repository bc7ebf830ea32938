/**
 * Whether a URL's host (as the WHATWG parser gives it: lower case, `127.1` → `127.0.0.1`) is this machine:
 * `localhost` or a loopback address (127.0.0.0/8, ::1, as ./address-class.ts classifies it). One rule for the
 * API's sandbox URLs (src/api/net/loopback-url.ts) and the upstreams production mode lets through in plain HTTP
 * (./plain-http-upstream.ts).
 *
 * Defends: nothing by itself. Does not defend: a local process posing as the service.
 */
import { classifyAddress } from './address-class.js';

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || classifyAddress(hostname).range === 'loopback';
}

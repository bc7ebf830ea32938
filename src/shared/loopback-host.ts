/**
 * Whether a URL's host (as the WHATWG parser gives it: lower case, `127.1` → `127.0.0.1`) is this machine:
 * `localhost` or a loopback address (127.0.0.0/8, ::1, IPv4-mapped 127.0.0.0/8, as ./address-class.ts classifies
 * it), and whether a whole URL is an http(s) URL on such a host. One rule for the API's sandbox URLs
 * (src/api/net/loopback-url.ts), the upstreams production mode lets through in plain HTTP (./plain-http-upstream.ts)
 * the CLI's sandbox endpoints (its faucets, local chain and Solana RPC: src/cli/commands/account/), where
 * `xx mcp --http` may listen without `--allow-remote` (src/cli/commands/mcp/mcp-listen-address.ts) and the Solana
 * RPC a sandbox API may read (ops/sandbox/solana/solana-rpc-loopback.ts).
 *
 * Defends: nothing by itself; its callers refuse, with it, to send a wallet address, a payment or a bearer off the
 * machine. Does not defend: a local process posing as the service. Known limit: no name but `localhost` counts
 * (`localhost.`, `*.localhost` or an /etc/hosts entry are refused), nor does anything resolve a name.
 */
import { classifyAddress } from './address-class.js';

export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || classifyAddress(hostname).range === 'loopback';
}

/** True when `text` parses as an `http:` or `https:` URL whose host is loopback; false otherwise, never a throw. */
export function isLoopbackHttpUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
}

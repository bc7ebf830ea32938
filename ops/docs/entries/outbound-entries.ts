/**
 * The proxy settings of the seller middleware's and the gate's calls out (facilitator, platform:
 * src/x402/pooled-request.ts), read at each call as Node's own `fetch` reads them: listed here whole, for
 * docs/configuration.md.
 */
import type { Entries } from './entry.js';

export const OUTBOUND_ENTRIES: Entries = {
  NODE_USE_ENV_PROXY: {
    meaning: '`1`: calls to the facilitator and the platform go through the proxy below, as Node’s `fetch` does',
  },
  HTTP_PROXY: { meaning: 'the proxy for `http:` URLs (with `NODE_USE_ENV_PROXY=1`; `http_proxy` too)' },
  HTTPS_PROXY: { meaning: 'the proxy for `https:` URLs (with `NODE_USE_ENV_PROXY=1`; `https_proxy` too)' },
  NO_PROXY: { meaning: 'hosts reached directly, comma-separated (`no_proxy` too)' },
};

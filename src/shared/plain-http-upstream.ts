/**
 * Whether a URL of an upstream service (the platform the gate reads its catalogue from, an x402 facilitator, a
 * JSON-RPC endpoint) is plain HTTP to another machine. Production mode of both processes refuses such a URL,
 * naming its variable (src/api/config/production-mode.ts, src/gate/gate-config.ts): https:// everywhere, http://
 * only to this machine — `localhost` or a loopback address (127.0.0.0/8, ::1, as ./address-class.ts classifies
 * it), a sidecar in the same network namespace. In src/shared/ so both processes use the one rule.
 *
 * Defends: a bearer sent in clear on every request (the gate's PAT to GATE_API_URL), and answers that decide
 * money forged by anyone on the path — a facilitator's isValid/success (content served unpaid, payouts marked
 * settled), an RPC's receipts and balances (the ledger verifier shaped).
 * Does not defend: a private network path (a container name, 10.x) is refused too — put TLS between the
 * containers or run the upstream as a sidecar; an https upstream that is not who it claims beyond what the CA
 * system checks; a local process posing as the sidecar.
 */
import { isLoopbackHost } from './loopback-host.js';

/** True when `text` is an http:// URL whose host is not this machine; false for https, loopback, or no URL. */
export function isPlainHttpOffHost(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false; // not a URL: the variable's own schema refuses it
  }
  if (url.protocol !== 'http:') return false;
  // The WHATWG parser has already normalised the host (lower case, 127.1 → 127.0.0.1, [::1] in brackets).
  return !isLoopbackHost(url.hostname);
}

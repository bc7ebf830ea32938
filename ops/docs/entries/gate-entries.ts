/**
 * The meaning of each treasury-gate variable (src/gate/gate-config.ts; its schema gives the names, defaults and
 * order), for docs/configuration.md.
 */
import type { Entries } from './entry.js';

export const GATE_ENTRIES: Entries = {
  GATE_HOST: { meaning: 'listen address' },
  GATE_PORT: { meaning: 'listen port' },
  GATE_METRICS_PORT: {
    meaning:
      "a listener of its own for GET /metrics (plain HTTP); set, the gate's port serves /metrics as any seller path; production mode needs it or GATE_METRICS_ON_PUBLIC_LISTENER=1",
  },
  GATE_METRICS_HOST: { meaning: 'address the metrics listener binds' },
  GATE_METRICS_ON_PUBLIC_LISTENER: {
    meaning:
      "`1`: /metrics on the gate's port in production mode (a proxy in front keeps it from the public); refused together with GATE_METRICS_PORT",
  },
  GATE_TOKEN: {
    meaning: 'the gate bearer: a PAT carrying the gate scope (alone, or beside a Treasury scope); required',
  },
  GATE_API_URL: { meaning: 'the Treasury platform the catalogue is read from and the ledger reported to' },
  FACILITATOR_URL: { meaning: 'x402 facilitator; absent: paid routes answer 503 unless `XX_ALLOW_LOCAL_ONLY=1`' },
  FACILITATOR_ADDRESS: { meaning: 'the on-chain Permit2 caller; required when `upto` is among `GATE_SCHEMES`' },
  GATE_SCHEMES: { meaning: 'comma-separated schemes offered: `exact`, `upto`' },
  GATE_NETWORK: { meaning: "CAIP-2 network the gate's sellers are paid on" },
  GATE_SOLANA_FACILITATOR_URL: {
    meaning:
      'Solana x402 facilitator: sellers with a proven Solana pay-to address are also sold on GATE_SOLANA_NETWORK, the fee payer read from its `GET /supported`; unset: no Solana',
  },
  GATE_SOLANA_NETWORK: { meaning: 'CAIP-2 id of the Solana cluster the gate sells on (mainnet or devnet)' },
  GATE_BASE_DOMAIN: {
    meaning:
      'host routing: `<slug>.<GATE_BASE_DOMAIN>` goes to that seller; otherwise the first path segment is the slug',
  },
  GATE_PUBLIC_URL: {
    meaning:
      "the gate's public base URL (scheme, host, optional port; https in production mode), proven to the platform at start (`/.well-known/xx-gate-verification.txt`) so discovery lists the account's sellers at `<url>/<slug>`, and whose scheme the 402 challenge's resource URL names (https behind a TLS front); unset: not listed, and the challenge names http",
  },
  GATE_REFRESH_MS: { meaning: 'how often the catalogue is read again; a failed read keeps the last good one' },
  GATE_UPTIME_REPORT_MS: {
    meaning:
      'how often the hourly counts of what origins answered are reported to the platform (`POST /v1/gate/uptime`); 0 records and reports none',
  },
  GATE_ORIGIN_TIMEOUT_MS: { meaning: 'how long the origin may take, body included; beyond it 504 and nothing settled' },
  GATE_MAX_REQUEST_BYTES: {
    meaning: 'largest request body (read into memory, then proxied with its length); larger: 413 before any payment',
  },
  GATE_ALLOW_PRIVATE_ORIGINS: {
    meaning:
      "`1`: sellers' origins may resolve to loopback or private addresses (own network, sandbox, tests); unset: refused (502 `gate_origin_refused`)",
  },
  GATE_MAX_HELD_BYTES: { meaning: 'largest answer held in memory until settlement (docs/gate.md)' },
  GATE_PLATFORM_TIMEOUT_MS: { meaning: 'time-out of a platform call' },
  GATE_VERIFY_TIMEOUT_MS: { meaning: 'time-out of a facilitator verify' },
  GATE_SETTLE_TIMEOUT_MS: { meaning: 'time-out of a facilitator settle' },
  GATE_PAYMENT_ID_REQUIRED: {
    meaning:
      '`1`: the challenge declares x402 `payment-identifier` required; a payment without an id gets 400 (docs/gate.md#payment-identifier)',
  },
  GATE_PAYMENT_ID_STORE: {
    meaning:
      'where payment-identifier ids and their answers are kept: `platform` (PostgreSQL through the API, shared by every gate) or `memory`',
  },
  GATE_PAYMENT_ID_MAX_ANSWER_BYTES: {
    meaning:
      'largest answer body kept for a payment-identifier retry (at most 262144); a larger one keeps its receipt only (410)',
  },
  GATE_LOG_LEVEL: { meaning: 'pino level' },
  TREASURY_EXIT_WITH_PARENT: { meaning: '`1`: stop when the parent process goes away (set by the sandbox)' },
  XX_ALLOW_LOCAL_ONLY: { meaning: '`1`: paid routes answer without a facilitator (sandbox only)' },
  XX_DISABLE_BODY_CAPTURE: { meaning: '`1`: do not capture response bodies for the ledger (as the middleware)' },
};

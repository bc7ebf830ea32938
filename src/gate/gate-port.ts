/**
 * The gate's side of the paywall (src/x402/seller/paid-request.ts `PaidRequestPort`) for one request: `pass`
 * proxies it unpaid and streams the answer back; `answer` writes the paywall's challenge or error; `run`
 * proxies the paid request and holds the origin's answer (src/x402/seller/held-body.ts) until the paywall
 * settles (`release`: the held body with the receipt) or discards it.
 *
 * What the buyer gets when the paid work fails, nothing settled: the origin's own answer as is when its status
 * is 400 or above; 502 `gate_origin_unreachable`, 502 `gate_origin_refused` (an origin not verified, or on an
 * address the gate may not connect to), 504 `gate_origin_timeout` when the gate could not get one; nothing when
 * the buyer left before the request reached the origin (not charged; the payment can be presented again).
 *
 * A buyer who leaves once the origin was reached is charged for what ran: the origin's answer is still read whole
 * and handed to the paywall, which settles it (exactly once; the replay guard keeps the payment spent, and a
 * `payment-identifier` keeps the answer for a retry) — then nothing is written. Otherwise a hang-up would buy an
 * unpaid run of the origin, again and again with the same payment (origin outcome `answered_client_closed`).
 *
 * Defends against: paid content leaving before settlement, an origin's failure being charged, an origin's
 * payment headers reaching the buyer (proxy-headers.ts), one payment buying many runs of the origin through
 * hang-ups. Does not defend against: a buyer leaving during the settlement call itself (settled and its ledger
 * row reported, then nothing is written); a buyer charged for an answer it hung up on (what it paid for ran).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { ERROR_CODES } from '../shared/error-codes.js';
import type { HeldResponse, PaidRequestPort, PaywallAnswer } from '../x402/seller/paid-request.js';
import { REPLAYED_HEADERS } from '../x402/seller/payment-identifier-rule.js';
import { parseSettlementOverride, SETTLEMENT_OVERRIDES_HEADER } from '../x402/seller/settlement-amount.js';
import type { GateMetrics } from './gate-metrics.js';
import type { RoutedRequest } from './gate-router.js';
import type { BuyerGone, OriginExchange, OriginProxy, OriginResponse } from './origin-proxy.js';
import { responseHeadersForBuyer, type OriginResponseHeaders } from './proxy-headers.js';

export type GateErrorCode =
  | 'gate_not_ready'
  | 'gate_seller_not_found'
  | 'gate_endpoint_not_found'
  | 'gate_origin_unreachable'
  | 'gate_origin_timeout'
  | 'gate_origin_refused'
  | 'gate_path_refused'
  | 'gate_method_override_refused'
  | 'gate_endpoint_not_priced'
  | 'payload_too_large'
  | 'internal_error';

/** Writes one JSON answer (the paywall's, or the gate's own) unless the response already started. */
export function writeJson(res: ServerResponse, status: number, headers: Record<string, string>, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  // Assigned onto a copy (a literal starting with a spread is slow on Node 20); the body goes as a string, so
  // Node writes it with the head in one `write` instead of a two-buffer `writev`.
  const head: Record<string, string> = Object.assign({}, headers);
  head['content-type'] = 'application/json; charset=utf-8';
  head['content-length'] = String(Buffer.byteLength(text, 'utf8'));
  res.writeHead(status, head);
  res.end(text, 'utf8');
}

export function writeGateError(res: ServerResponse, code: GateErrorCode, headers: Record<string, string> = {}): void {
  const { status, message } = ERROR_CODES[code];
  writeJson(res, status, { 'cache-control': 'no-store', ...headers }, { error_code: code, user_message: message });
}

/** Streams the origin's answer to the buyer (its headers filtered), unheld. */
function streamThrough(res: ServerResponse, response: OriginResponse, done: () => void): void {
  res.writeHead(response.statusCode, responseHeadersForBuyer(response.headers));
  pipeline(response.body.stream(), res, () => done());
}

/** The first value of an origin's response header (a repeated one is an array): a header that has one meaning. */
const firstValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * A repeated header's lines as one list (RFC 9110 §5.3): a Cache-Control named twice keeps both directives, and a
 * Settlement-Overrides named twice is not one JSON object, so its charge is refused rather than one line guessed.
 */
const joinedValue = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

/** Headers whose value is a list (RFC 9110): a repeated one is joined; any other keeps its first line. */
const LIST_HEADERS = new Set(['cache-control', 'content-encoding', 'content-language', 'vary']);

/**
 * The origin's headers a `payment-identifier` answer replays (payment-identifier-rule.ts `REPLAYED_HEADERS`: what
 * the body means — its type, encoding, range, target — and how it may be cached), one value each.
 */
function replayableHeaders(headers: OriginResponseHeaders): Record<string, string | undefined> {
  const kept: Record<string, string | undefined> = {};
  for (const name of REPLAYED_HEADERS)
    kept[name] = LIST_HEADERS.has(name) ? joinedValue(headers[name]) : firstValue(headers[name]);
  return kept;
}

/** The exchange's failure, written; `client_closed` writes nothing. */
function writeExchangeFailure(
  res: ServerResponse,
  metrics: GateMetrics,
  outcome: Exclude<OriginExchange, { kind: 'response' }>,
): void {
  metrics.origin.inc({ outcome: outcome.kind });
  if (outcome.kind === 'unreachable') writeGateError(res, 'gate_origin_unreachable');
  else if (outcome.kind === 'timeout') writeGateError(res, 'gate_origin_timeout');
  else if (outcome.kind === 'refused') writeGateError(res, 'gate_origin_refused');
}

/** Writes the held origin answer (its headers filtered) with the paywall's `headers`; `body` replaces the held one. */
function writeHeld(
  req: IncomingMessage,
  res: ServerResponse,
  held: {
    response: OriginResponse;
    status: number;
    headers: Record<string, string>;
    body: Buffer | Readable | undefined;
    defaultCacheControl: string | undefined;
  },
): void {
  const { body, status } = held;
  if (res.destroyed) {
    if (body && !Buffer.isBuffer(body)) body.destroy();
    return;
  }
  const replaced = Buffer.isBuffer(body);
  const out: OutgoingHttpHeaders = responseHeadersForBuyer(
    held.response.headers,
    replaced && req.method !== 'HEAD' ? ['content-length'] : [],
  );
  for (const [name, value] of Object.entries(held.headers)) out[name.toLowerCase()] = value;
  if (held.defaultCacheControl && out['cache-control'] === undefined) out['cache-control'] = held.defaultCacheControl;
  if (Buffer.isBuffer(body)) {
    if (req.method !== 'HEAD') out['content-length'] = String(body.length);
    res.writeHead(status, out);
    res.end(req.method === 'HEAD' ? undefined : body);
  } else if (body) {
    res.writeHead(status, out);
    pipeline(body, res, () => undefined);
  } else {
    res.writeHead(status, out);
    res.end();
  }
}

export interface GatePortContext {
  req: IncomingMessage;
  res: ServerResponse;
  origin: URL | undefined;
  routed: RoutedRequest;
  /** The request body the gate read (request-body.ts); undefined: none is forwarded. */
  body: Buffer | undefined;
  proxy: OriginProxy;
  maxHeldBytes: number;
  metrics: GateMetrics;
  /** Hears whether the origin answered (status below 500) or failed (5xx, unreachable, timed out); ./uptime-buckets.ts. */
  observe?: ((answered: boolean) => void) | undefined;
}

/** What an exchange says of the origin: answered, failed, or nothing (refused by the gate, the buyer left). */
function originAnswered(exchange: OriginExchange): boolean | undefined {
  if (exchange.kind === 'response') return exchange.response.statusCode < 500;
  if (exchange.kind === 'unreachable' || exchange.kind === 'timeout') return false;
  return undefined;
}

/** The request to the origin, its outcome heard by `observe`; `buyerGone`: what the buyer leaving does to it. */
async function forwardObserved(c: GatePortContext, buyerGone: BuyerGone): Promise<OriginExchange> {
  // No origin the gate may sell (none set, or not verified): nothing is forwarded.
  if (!c.origin) return { kind: 'refused', cause: 'origin_not_verified' };
  const exchange = await c.proxy.forward(c.req, c.res, c.origin, c.routed, c.body, buyerGone);
  const answered = originAnswered(exchange);
  if (answered !== undefined) c.observe?.(answered);
  return exchange;
}

export function gatePort(c: GatePortContext): PaidRequestPort {
  const { req, res, metrics } = c;

  const writeFailure = (outcome: Exclude<OriginExchange, { kind: 'response' }>) =>
    writeExchangeFailure(res, metrics, outcome);

  return {
    async pass() {
      const exchange = await forwardObserved(c, 'abort');
      if (exchange.kind !== 'response') return writeFailure(exchange);
      metrics.origin.inc({ outcome: 'passed' });
      streamThrough(res, exchange.response, exchange.done);
    },

    answer(answer: PaywallAnswer) {
      if (answer.body === undefined) {
        if (!res.headersSent && !res.destroyed) res.writeHead(answer.status, answer.headers).end();
        return;
      }
      writeJson(res, answer.status, answer.headers, answer.body);
    },

    replay(answer) {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': String(answer.body.length) });
      res.end(req.method === 'HEAD' ? undefined : answer.body);
    },

    async run(): Promise<HeldResponse | 'failed'> {
      // Once sent, the paid run goes on without the buyer: the origin may be doing the work (see the header).
      const exchange = await forwardObserved(c, 'finish_once_sent');
      if (exchange.kind !== 'response') {
        writeFailure(exchange);
        return 'failed';
      }
      const { response } = exchange;
      const status = response.statusCode;
      if (status >= 400) {
        metrics.origin.inc({ outcome: 'failed_status' });
        streamThrough(res, response, exchange.done);
        return 'failed';
      }
      let captured;
      try {
        captured = await response.body.capture(c.maxHeldBytes);
      } catch {
        exchange.done();
        writeFailure(exchange.timedOut() ? { kind: 'timeout' } : { kind: 'unreachable', cause: 'body cut' });
        return 'failed';
      }
      exchange.done();
      // The buyer gone after the origin was reached: the answer is settled all the same (writeHeld writes nothing).
      metrics.origin.inc({ outcome: res.destroyed ? 'answered_client_closed' : 'answered' });
      return {
        captured,
        status,
        headers: () => replayableHeaders(response.headers),
        override: parseSettlementOverride(joinedValue(response.headers[SETTLEMENT_OVERRIDES_HEADER.toLowerCase()])),
        // Nothing of the origin's answer has been written yet: the paywall's answer goes out alone.
        dropHeaders() {},
        release(headers, body: Buffer | Readable | undefined, defaultCacheControl) {
          writeHeld(req, res, { response, status, headers, body, defaultCacheControl });
        },
      };
    },
  };
}

/**
 * One request to a seller's origin, a held and bounded exchange over undici's HTTP/1.1 client (its `Agent`:
 * keep-alive connections per origin, at most 256 each): the request line is the routed target exactly as priced
 * (`routed.originUrl`, handed to undici as its path, which it sends as given — no URL parsing, no joining; a
 * target it would refuse to write, or an origin URL with a path or query of its own, is `refused` before any
 * connection); the headers of proxy-headers.ts, Host the origin's; the body the gate already read and counted
 * (request-body.ts), written in one piece with its Content-Length (no body: no Content-Length); connections to
 * vetted origin addresses only (origin-address.ts, the `lookup` of every connection); the response handed back
 * with its body unread (origin-body.ts: held in memory by the paywall until the payment is settled, or streamed
 * when unheld). No proxy library: the exchange is one request and one response, nothing is piped from the buyer.
 * undici rather than node:http's client, and its `dispatch` with a handler of the gate's own rather than its
 * `request`: the same exchange for about half of node:http's CPU, and without a body stream or a promise of
 * undici's on the path of every paid request the gate forwards (docs/performance.md).
 *
 * Every exchange ends in exactly one outcome: the origin's response; `unreachable` (refused, reset, DNS, a TLS
 * certificate not trusted); `refused` (the origin's address is not one the gate may connect to, or the request
 * line would not be the priced target); `timeout` (no complete answer within `timeoutMs` — the caller calls
 * `done()` once it has read what it holds, which stops the clock); `client_closed` (the buyer went away first:
 * nothing is sent, or the origin request is aborted).
 *
 * The buyer leaving (`BuyerGone`): an unpaid pass is aborted whenever it happens. A paid run is aborted only while
 * the origin has not been reached (the buyer gone before the request was handed to the origin's connection);
 * after that the origin may already be doing the paid work, so the exchange goes on to the origin's whole answer
 * (bounded by `timeoutMs` and the held-bytes cap as ever), which the paywall then settles: what runs is what is
 * charged, and a hang-up cannot buy a free run of the origin (gate-port.ts).
 *
 * Defends against: a path re-resolved after pricing (the priced target is the request line, byte for byte), a
 * slow or dead origin holding a paid request forever (bounded, then 504/502 with nothing settled), an origin on
 * loopback or a private network without the operator's consent, a buyer's disconnect leaving an unpaid or
 * not-yet-sent origin request running, a buyer's disconnect undoing a paid run the origin already began. Does not
 * defend against: an origin that answers quickly and then trickles an oversize body after settlement (its
 * socket's own idle time-out ends it; the buyer was charged for an answer that began).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { OriginBody } from './origin-body.js';
import { literalRefused, ORIGIN_REFUSED_CODE, vettedLookup } from './origin-address.js';
import { requestHeadersForOrigin, type OriginResponseHeaders } from './proxy-headers.js';
import type { RoutedRequest } from './gate-router.js';
import type { GateConfig } from './gate-config.js';
import { forwardedAddress, publicAddressOf, type PublicAddress } from './forwarded-address.js';

/** The origin's answer: its status, its headers (names lower-cased; a repeated header as an array), its body unread. */
export interface OriginResponse {
  statusCode: number;
  headers: OriginResponseHeaders;
  body: OriginBody;
}

export type OriginExchange =
  | {
      kind: 'response';
      response: OriginResponse;
      /** The caller has read what it holds: stop the time-out clock. */
      done(): void;
      /** The time-out struck (while the caller was reading the body). */
      timedOut(): boolean;
    }
  | { kind: 'unreachable'; cause: string }
  | { kind: 'refused'; cause: 'origin_address' | 'request_line' | 'origin_not_verified' }
  | { kind: 'timeout' }
  | { kind: 'client_closed' };

/**
 * What the buyer leaving does to the exchange: `abort` it (an unpaid pass), or `finish_once_sent` (a paid run:
 * aborted only while the request has not reached the origin's connection, finished to the answer after).
 */
export type BuyerGone = 'abort' | 'finish_once_sent';

export interface OriginProxyOptions {
  timeoutMs: number;
  /** Let origins on loopback and private ranges through (GATE_ALLOW_PRIVATE_ORIGINS). */
  allowPrivate: boolean;
  /**
   * GATE_PUBLIC_URL: the scheme and host the origin is told the buyer reached (forwarded-address.ts); undefined:
   * the gate's own listener's scheme and the buyer's Host.
   */
  publicUrl?: string | undefined;
}

/** An origin URL names a server only: a path or query of its own would change the priced request line. */
const originHasOwnPath = (origin: URL) => origin.pathname !== '/' || origin.search !== '';

/** undici's word for a request it will not write (a request line or header value it refuses). */
const INVALID_REQUEST_CODES = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/** What every request reads of an origin URL, worked out once per URL (by its `href`: a changed URL is new). */
interface OriginFacts {
  /** `scheme://host[:port]`, undici's key and connection target. */
  origin: string;
  /** `host[:port]` when the port is not the scheme's default, as URL gives it: the origin's Host header. */
  host: string;
  /** Why nothing may be sent to it (origin-address.ts; a path or query of its own), or undefined. */
  refused: 'origin_address' | 'request_line' | undefined;
}

/** Origin URLs remembered at most (a gate sells a few hundred origins; the memory is emptied when full). */
const MAX_REMEMBERED_ORIGINS = 4096;

/** Ends an exchange whose time ran out: the timer's callback, with its exchange as argument (no closure a request). */
function onTimeout(exchange: Exchange): void {
  exchange.timeout();
}

/**
 * One request to its single outcome (see the header): undici's handler for it, its clock and the buyer's `close`
 * listener — one object a request, rather than a closure for each callback.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private settled = false;
  private timedOut = false;
  private controller: Dispatcher.DispatchController | undefined;
  /** The request was handed to the origin's connection (and not aborted as it started). */
  private sent = false;
  private body: OriginBody | undefined;
  /** Why the exchange was given up before undici started it (it is aborted as it starts). */
  private abandoned: Error | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onClientClose = () => {
    if (this.res.writableFinished || !this.endsWithBuyer()) return;
    this.settle({ kind: 'client_closed' });
    this.abandon(new Error('the buyer went away'));
  };

  constructor(
    private readonly res: ServerResponse,
    private readonly buyerGone: BuyerGone,
    timeoutMs: number,
    private readonly resolve: (outcome: OriginExchange) => void,
  ) {
    this.timer = setTimeout(onTimeout, timeoutMs, this);
    res.on('close', this.onClientClose);
  }

  /** Whether the buyer leaving (now) ends the exchange: always for a pass; for a paid run, until it was sent. */
  private endsWithBuyer(): boolean {
    return this.buyerGone === 'abort' || !this.sent;
  }

  private abandon(reason: Error): void {
    if (this.body) this.body.destroy(reason);
    else if (this.controller) this.controller.abort(reason);
    else this.abandoned = reason;
  }

  private settle(outcome: OriginExchange): void {
    if (this.settled) return;
    this.settled = true;
    if (outcome.kind !== 'response') clearTimeout(this.timer);
    this.res.off('close', this.onClientClose);
    this.resolve(outcome);
  }

  /** No complete answer in time. */
  timeout(): void {
    this.timedOut = true;
    this.settle({ kind: 'timeout' });
    this.abandon(new Error('origin time-out'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abandoned) controller.abort(this.abandoned);
    else this.sent = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: OriginResponseHeaders): void {
    // 1xx answers are informational (undici passes them on): the answer is the next one.
    if (statusCode < 200 || this.body) return;
    const body = new OriginBody(controller);
    this.body = body;
    if (this.settled) {
      body.destroy();
      return;
    }
    const { res, timer } = this;
    this.settle({
      kind: 'response',
      response: { statusCode, headers, body },
      done: () => clearTimeout(timer),
      timedOut: () => this.timedOut,
    });
    // The buyer leaving while the answer is held or streamed ends the origin's side too — not a paid run's
    // (the caller reads it whole, to settle it, then drops what the buyer is no longer there to take).
    if (this.buyerGone === 'abort')
      res.once('close', () => {
        if (!res.writableFinished) body.destroy(new Error('the buyer went away'));
      });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.body?.data(chunk);
  }

  onResponseEnd(): void {
    this.body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error & { code?: string }): void {
    if (this.body) this.body.fail(err);
    else if (this.timedOut) this.settle({ kind: 'timeout' });
    else if (this.res.destroyed && this.endsWithBuyer()) this.settle({ kind: 'client_closed' });
    else if (err.code === ORIGIN_REFUSED_CODE) this.settle({ kind: 'refused', cause: 'origin_address' });
    else if (err.code && INVALID_REQUEST_CODES.has(err.code)) this.settle({ kind: 'refused', cause: 'request_line' });
    else this.settle({ kind: 'unreachable', cause: err.code ?? err.message });
  }
}

export class OriginProxy {
  private readonly agent: Agent;
  private readonly facts = new Map<string, OriginFacts>();
  private readonly publicAddress: PublicAddress | undefined;

  /** The gate's proxy: GATE_ORIGIN_TIMEOUT_MS, GATE_ALLOW_PRIVATE_ORIGINS and GATE_PUBLIC_URL. */
  static forGate(config: Pick<GateConfig, 'originTimeoutMs' | 'allowPrivateOrigins' | 'publicUrl'>): OriginProxy {
    return new OriginProxy({
      timeoutMs: config.originTimeoutMs,
      allowPrivate: config.allowPrivateOrigins,
      publicUrl: config.publicUrl,
    });
  }

  constructor(private readonly options: OriginProxyOptions) {
    this.publicAddress = publicAddressOf(options.publicUrl);
    this.agent = new Agent({ connections: 256, connect: { lookup: vettedLookup(options.allowPrivate) } });
  }

  /** What is sent to `origin`, worked out on its first request (see `OriginFacts`). */
  private factsOf(origin: URL): OriginFacts {
    let facts = this.facts.get(origin.href);
    if (facts === undefined) {
      const refused = literalRefused(origin, this.options.allowPrivate)
        ? 'origin_address'
        : originHasOwnPath(origin)
          ? 'request_line'
          : undefined;
      facts = { origin: origin.origin, host: origin.host, refused };
      if (this.facts.size >= MAX_REMEMBERED_ORIGINS) this.facts.clear();
      this.facts.set(origin.href, facts);
    }
    return facts;
  }

  /**
   * The headers the origin gets for `req` (proxy-headers.ts; the forwarded scheme and host: forwarded-address.ts),
   * Host the origin's, the body's length.
   */
  private headersFor(req: IncomingMessage, host: string, routed: RoutedRequest, body: Buffer | undefined) {
    const encrypted = 'encrypted' in req.socket && req.socket.encrypted === true;
    const reached = forwardedAddress(this.publicAddress, routed.by, req.headers.host, encrypted);
    const headers = requestHeadersForOrigin(req.headers, {
      for: req.socket.remoteAddress,
      host: reached.host,
      proto: reached.proto,
      prefix: routed.prefix,
    });
    headers.host = host;
    if (body) headers['content-length'] = String(body.length);
    return headers;
  }

  /**
   * Sends `req` to `origin` at `routed.originUrl` with `body` (already read; undefined: none); resolves with the
   * one outcome of the exchange. `buyerGone`: what the buyer leaving does to it (see the header).
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    origin: URL,
    routed: RoutedRequest,
    body: Buffer | undefined,
    buyerGone: BuyerGone = 'abort',
  ): Promise<OriginExchange> {
    const facts = this.factsOf(origin);
    if (facts.refused) return Promise.resolve({ kind: 'refused', cause: facts.refused });
    // Gone already (while the body was read or the payment verified; its `close` will not come again): not sent.
    if (res.destroyed) return Promise.resolve({ kind: 'client_closed' });
    const request: Dispatcher.DispatchOptions & { origin: string } = {
      origin: facts.origin,
      path: routed.originUrl,
      method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: this.headersFor(req, facts.host, routed, body),
      body: body ?? null,
    };
    return new Promise<OriginExchange>((resolve) => {
      this.agent.dispatch(request, new Exchange(res, buyerGone, this.options.timeoutMs, resolve));
    });
  }

  /** Closes the origin connections (requests still running are aborted); resolves once they are closed. */
  close(): Promise<void> {
    return this.agent.destroy().catch(() => undefined);
  }
}

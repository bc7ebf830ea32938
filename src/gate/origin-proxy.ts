/**
 * One request to a seller's origin, a held and bounded exchange over node:http(s) with keep-alive agents: the
 * request line is the routed target exactly as priced (`routed.originUrl`, handed to `http.request` as its path,
 * which Node sends as given — no URL parsing, no joining; a target Node would refuse to write, or an origin URL
 * with a path or query of its own, is `refused` before any connection); the headers of proxy-headers.ts, Host
 * the origin's; the body the gate already read and counted (request-body.ts), written in one piece with its
 * Content-Length (no body: no Content-Length, no stream); keep-alive connections to vetted origin addresses
 * only (origin-address.ts); the response handed back unread so the paywall can hold it until the payment is
 * settled. No proxy library: the exchange is one request and one response, nothing is piped from the buyer.
 *
 * Every exchange ends in exactly one outcome: the origin's response; `unreachable` (refused, reset, DNS);
 * `refused` (the origin's address is not one the gate may connect to, or the request line would not be the
 * priced target); `timeout` (no complete answer within `timeoutMs` — the caller calls `done()` once it has read
 * what it holds, which stops the clock); `client_closed` (the buyer went away first: the origin request is
 * aborted).
 *
 * Defends against: a path re-resolved after pricing (the priced target is the request line, byte for byte), a
 * slow or dead origin holding a paid request forever (bounded, then 504/502 with nothing settled), an origin on
 * loopback or a private network without the operator's consent, a buyer's disconnect leaving the origin request
 * running. Does not defend against: an origin that answers quickly and then trickles an oversize body after
 * settlement (its socket's own idle time-out ends it; the buyer was charged for an answer that began).
 */
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import { literalRefused, ORIGIN_REFUSED_CODE, vettedLookup } from './origin-address.js';
import { requestHeadersForOrigin } from './proxy-headers.js';
import type { RoutedRequest } from './gate-router.js';

export type OriginExchange =
  | {
      kind: 'response';
      response: IncomingMessage;
      /** The caller has read what it holds: stop the time-out clock. */
      done(): void;
      /** The time-out struck (while the caller was reading the body). */
      timedOut(): boolean;
    }
  | { kind: 'unreachable'; cause: string }
  | { kind: 'refused'; cause: 'origin_address' | 'request_line' | 'origin_not_verified' }
  | { kind: 'timeout' }
  | { kind: 'client_closed' };

export interface OriginProxyOptions {
  timeoutMs: number;
  /** Let origins on loopback and private ranges through (GATE_ALLOW_PRIVATE_ORIGINS). */
  allowPrivate: boolean;
}

/** The origin's host for the Host header (`host:port` when the port is not the scheme's default, as URL gives it). */
const originHost = (origin: URL) => origin.host;

/** An origin URL names a server only: a path or query of its own would change the priced request line. */
const originHasOwnPath = (origin: URL) => origin.pathname !== '/' || origin.search !== '';

export class OriginProxy {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly options: OriginProxyOptions) {
    const lookup = vettedLookup(options.allowPrivate);
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, lookup });
  }

  /** The headers the origin gets for `req` (proxy-headers.ts), Host the origin's, the body's length. */
  private headersFor(req: IncomingMessage, origin: URL, routed: RoutedRequest, body: Buffer | undefined) {
    const headers: OutgoingHttpHeaders = requestHeadersForOrigin(req.headers, {
      for: req.socket.remoteAddress,
      host: req.headers.host,
      proto: 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
      prefix: routed.prefix,
    });
    headers.host = originHost(origin);
    if (body) headers['content-length'] = String(body.length);
    return headers;
  }

  /** The outgoing request, or undefined when Node refuses the request line (it would not be the priced target). */
  private open(req: IncomingMessage, origin: URL, routed: RoutedRequest, body: Buffer | undefined) {
    const secure = origin.protocol === 'https:';
    const hostname = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
    try {
      return (secure ? https : http).request({
        protocol: origin.protocol,
        hostname,
        port: origin.port || (secure ? 443 : 80),
        method: req.method ?? 'GET',
        path: routed.originUrl,
        headers: this.headersFor(req, origin, routed, body),
        agent: secure ? this.httpsAgent : this.httpAgent,
      });
    } catch {
      return undefined;
    }
  }

  /**
   * Sends `req` to `origin` at `routed.originUrl` with `body` (already read; undefined: none); resolves with the
   * one outcome of the exchange.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    origin: URL,
    routed: RoutedRequest,
    body: Buffer | undefined,
  ): Promise<OriginExchange> {
    if (literalRefused(origin, this.options.allowPrivate))
      return Promise.resolve({ kind: 'refused', cause: 'origin_address' });
    if (originHasOwnPath(origin)) return Promise.resolve({ kind: 'refused', cause: 'request_line' });
    const outgoing = this.open(req, origin, routed, body);
    if (!outgoing || outgoing.path !== routed.originUrl) {
      outgoing?.destroy();
      return Promise.resolve({ kind: 'refused', cause: 'request_line' });
    }
    return this.exchange(outgoing, res, body);
  }

  /** Runs one opened request to its single outcome (see the header). */
  private exchange(outgoing: http.ClientRequest, res: ServerResponse, body: Buffer | undefined) {
    return new Promise<OriginExchange>((resolve) => {
      let settled = false;
      let timedOut = false;
      let response: IncomingMessage | undefined;
      const settle = (outcome: OriginExchange) => {
        if (settled) return;
        settled = true;
        if (outcome.kind !== 'response') clearTimeout(timer);
        res.off('close', onClientClose);
        resolve(outcome);
      };
      const timer = setTimeout(() => {
        timedOut = true;
        settle({ kind: 'timeout' });
        outgoing.destroy();
        response?.destroy(new Error('origin time-out'));
      }, this.options.timeoutMs);
      const onClientClose = () => {
        if (res.writableFinished) return;
        settle({ kind: 'client_closed' });
        outgoing.destroy();
      };
      res.once('close', onClientClose);
      outgoing.once('response', (incoming) => {
        response = incoming;
        const done = () => clearTimeout(timer);
        settle({ kind: 'response', response: incoming, done, timedOut: () => timedOut });
        // The buyer leaving while the answer is held or streamed ends the origin's side too.
        res.once('close', () => {
          if (!res.writableFinished) incoming.destroy();
        });
      });
      outgoing.on('error', (err: Error & { code?: string }) => {
        if (timedOut) settle({ kind: 'timeout' });
        else if (res.destroyed) settle({ kind: 'client_closed' });
        else if (err.code === ORIGIN_REFUSED_CODE) settle({ kind: 'refused', cause: 'origin_address' });
        else settle({ kind: 'unreachable', cause: err.code ?? err.message });
      });
      outgoing.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

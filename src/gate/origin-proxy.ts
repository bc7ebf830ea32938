/**
 * One request to a seller's origin, through http-proxy-3 (the kept proxy library; no hand-written piping of the
 * request): the request line is the routed target exactly as priced (`toProxy`: the library joins it to "/"
 * without parsing it; the request line is checked against it when the request gets its connection,
 * before anything is written to it), the headers of
 * proxy-headers.ts, Host set to the origin's, the body the gate already read and counted (request-body.ts) with
 * its Content-Length, keep-alive connections to vetted origin addresses only (origin-address.ts), and the
 * response handed back unread (`selfHandleResponse`) so the paywall can hold it until the payment is settled.
 *
 * Every exchange ends in exactly one outcome: the origin's response; `unreachable` (refused, reset, DNS);
 * `refused` (the origin's address is not one the gate may connect to, or the request line would not be the
 * priced target); `timeout` (no complete answer within `timeoutMs` — the caller calls `done()` once it has read
 * what it holds, which stops the clock); `client_closed` (the buyer went away first: the origin request is
 * aborted).
 *
 * Defends against: a path re-resolved after pricing (WHATWG `..`, `\`, `%2e` handling in the library's URL
 * parsing), a slow or dead origin holding a paid request forever (bounded, then 504/502 with nothing settled),
 * an origin on loopback or a private network without the operator's consent, a buyer's disconnect leaving the
 * origin request running. Does not defend against: an origin that answers quickly and then trickles an oversize
 * body after settlement (its socket's own idle time-out ends it; the buyer was charged for an answer that began).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
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

interface Pending {
  /** The path and query the origin must receive (the priced target). */
  target: string;
  settle(outcome: OriginExchange): void;
  proxyReq?: http.ClientRequest;
  response?: IncomingMessage;
}

export interface OriginProxyOptions {
  timeoutMs: number;
  /** Let origins on loopback and private ranges through (GATE_ALLOW_PRIVATE_ORIGINS). */
  allowPrivate: boolean;
}

export class OriginProxy {
  private readonly proxy = createProxyServer({});
  private readonly pending = new WeakMap<IncomingMessage, Pending>();
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(private readonly options: OriginProxyOptions) {
    const lookup = vettedLookup(options.allowPrivate);
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, lookup });
    this.proxy.on('proxyReq', (proxyReq, req) => {
      const p = this.pending.get(req);
      if (!p) return;
      p.proxyReq = proxyReq;
      // The request line is the priced target, or nothing is sent.
      if (proxyReq.path !== p.target) {
        p.settle({ kind: 'refused', cause: 'request_line' });
        proxyReq.destroy();
      }
    });
    this.proxy.on('proxyRes', (proxyRes, req) =>
      this.pending.get(req)?.settle({ kind: 'response', response: proxyRes } as OriginExchange),
    );
    // A reset after the buyer's socket closed: http-proxy reports it here instead of to the call's callback.
    this.proxy.on('econnreset', (_err, req) => this.pending.get(req)?.settle({ kind: 'client_closed' }));
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
    return new Promise<OriginExchange>((resolve) => {
      let settled = false;
      let timedOut = false;
      const state: Pending = {
        target: routed.originUrl,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          if (outcome.kind !== 'response') {
            clearTimeout(timer);
            resolve(outcome);
            return;
          }
          state.response = outcome.response;
          resolve({
            kind: 'response',
            response: outcome.response,
            done: () => clearTimeout(timer),
            timedOut: () => timedOut,
          });
        },
      };
      const timer = setTimeout(() => {
        timedOut = true;
        state.settle({ kind: 'timeout' });
        state.proxyReq?.destroy();
        state.response?.destroy(new Error('origin time-out'));
      }, this.options.timeoutMs);
      res.once('close', () => {
        if (res.writableFinished) return;
        state.settle({ kind: 'client_closed' });
        state.proxyReq?.destroy();
      });
      this.pending.set(req, state);

      const forwardedFor = req.socket.remoteAddress;
      req.headers = requestHeadersForOrigin(req.headers, {
        for: forwardedFor,
        host: req.headers.host,
        proto: 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
        prefix: routed.prefix,
      });
      if (body) req.headers['content-length'] = String(body.length);
      req.url = routed.originUrl;
      this.proxy.web(
        req,
        res,
        {
          target: origin.href,
          toProxy: true,
          changeOrigin: true,
          selfHandleResponse: true,
          agent: origin.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
          buffer: Readable.from(body ? [body] : []),
        },
        (err: Error & { code?: string }) => {
          if (timedOut) state.settle({ kind: 'timeout' });
          else if (res.destroyed) state.settle({ kind: 'client_closed' });
          else if (err.code === ORIGIN_REFUSED_CODE) state.settle({ kind: 'refused', cause: 'origin_address' });
          else state.settle({ kind: 'unreachable', cause: err.code ?? err.message });
        },
      );
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/**
 * One request to a seller's origin, through http-proxy-3 (the kept proxy library; no hand-written piping of the
 * request): the request line rewritten to the origin's path, the headers of proxy-headers.ts, Host set to the
 * origin's, the request body streamed (a body without Content-Length is counted and cut at `maxRequestBytes`),
 * keep-alive connections to origins, and the response handed back unread (`selfHandleResponse`) so the paywall
 * can hold it until the payment is settled.
 *
 * Every exchange ends in exactly one outcome: the origin's response; `unreachable` (refused, reset, DNS);
 * `timeout` (no complete answer within `timeoutMs` — the caller calls `done()` once it has read what it holds,
 * which stops the clock); `too_large` (the request body passed the cap); `client_closed` (the buyer went away
 * first: the origin request is aborted).
 *
 * Defends against: a slow or dead origin holding a paid request forever (bounded, then 504/502 with nothing
 * settled), an unbounded request body, a buyer's disconnect leaving the origin request running. Does not
 * defend against: an origin that answers quickly and then trickles an oversize body after settlement (its
 * socket's own idle time-out ends it; the buyer was charged for an answer that began).
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { createProxyServer } from 'http-proxy-3';
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
  | { kind: 'timeout' }
  | { kind: 'too_large' }
  | { kind: 'client_closed' };

interface Pending {
  settle(outcome: OriginExchange): void;
  proxyReq?: http.ClientRequest;
  response?: IncomingMessage;
}

export interface OriginProxyOptions {
  timeoutMs: number;
  maxRequestBytes: number;
}

export class OriginProxy {
  private readonly proxy = createProxyServer({});
  private readonly pending = new WeakMap<IncomingMessage, Pending>();
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(private readonly options: OriginProxyOptions) {
    this.proxy.on('proxyReq', (proxyReq, req) => {
      const p = this.pending.get(req);
      if (p) p.proxyReq = proxyReq;
    });
    this.proxy.on('proxyRes', (proxyRes, req) =>
      this.pending.get(req)?.settle({ kind: 'response', response: proxyRes } as OriginExchange),
    );
    // A reset after the buyer's socket closed: http-proxy reports it here instead of to the call's callback.
    this.proxy.on('econnreset', (_err, req) => this.pending.get(req)?.settle({ kind: 'client_closed' }));
  }

  /** Sends `req` to `origin` at `routed.originUrl`; resolves with the one outcome of the exchange. */
  forward(req: IncomingMessage, res: ServerResponse, origin: URL, routed: RoutedRequest): Promise<OriginExchange> {
    return new Promise<OriginExchange>((resolve) => {
      let settled = false;
      let timedOut = false;
      let tooLarge = false;
      const state: Pending = {
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
      // A body without a declared length (chunked) is counted as it streams; one with a length was checked already.
      const unbounded = req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined;
      req.headers = requestHeadersForOrigin(req.headers, {
        for: forwardedFor,
        host: req.headers.host,
        proto: 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http',
        prefix: routed.prefix,
      });
      req.url = routed.originUrl;
      let buffer: Transform | undefined;
      if (unbounded) {
        let total = 0;
        const max = this.options.maxRequestBytes;
        buffer = new Transform({
          transform(chunk: Buffer, _enc, callback) {
            total += chunk.length;
            if (total > max) {
              tooLarge = true;
              state.settle({ kind: 'too_large' });
              state.proxyReq?.destroy();
              callback();
              return;
            }
            callback(null, chunk);
          },
        });
        req.pipe(buffer);
      }
      this.proxy.web(
        req,
        res,
        {
          target: origin.href,
          changeOrigin: true,
          selfHandleResponse: true,
          agent: origin.protocol === 'https:' ? this.httpsAgent : this.httpAgent,
          ...(buffer ? { buffer } : {}),
        },
        (err: Error & { code?: string }) => {
          if (tooLarge) state.settle({ kind: 'too_large' });
          else if (timedOut) state.settle({ kind: 'timeout' });
          else if (res.destroyed) state.settle({ kind: 'client_closed' });
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

/**
 * The paywall's view of one Koa request (../seller/paid-request-port.ts): `next` is the paid work, ctx.body the
 * held response (body-capture.ts), the `upto` amount the handler named taken off it (./settlement-amount.ts);
 * the paywall's answers, and stored `payment-identifier` answers, are written on `ctx`.
 *
 * Defends against: a handler's headers outliving a discarded paid response (they are dropped with it); the
 * override header reaching the buyer. Does not defend against: a handler that bypasses Koa (x402-koa.ts).
 */
import type { Context, Next } from 'koa';
import type { PaidRequestPort } from '../seller/paid-request-port.js';
import { REPLAYED_HEADERS } from '../seller/payment-identifier-rule.js';
import { captureBody } from './body-capture.js';
import { takeSettlementOverride } from './settlement-amount.js';

/** The paywall's view of one Koa request: `next` is the paid work, ctx.body the held response. */
export function koaPort(ctx: Context, next: Next, maxBodyBytes: number): PaidRequestPort {
  return {
    pass: () => next(),
    answer(answer) {
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = answer.body;
    },
    replay(answer) {
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = answer.body;
    },
    async run() {
      const headersBefore = new Set(Object.keys(ctx.response.headers));
      await next();
      if (ctx.status >= 400) return 'failed';
      const captured = await captureBody(ctx, maxBodyBytes);
      return {
        captured,
        status: ctx.status,
        // What a stored `payment-identifier` answer replays: the headers that say what the body bytes are (a
        // handler's pre-compressed file carries its Content-Encoding, a range its Content-Range).
        headers: () => Object.fromEntries(REPLAYED_HEADERS.map((name) => [name, ctx.response.get(name) || undefined])),
        override: takeSettlementOverride(ctx),
        /** Removes every response header the handler added (a discarded paid response must not leak through them). */
        dropHeaders() {
          for (const name of Object.keys(ctx.response.headers)) if (!headersBefore.has(name)) ctx.remove(name);
        },
        release(headers, body, defaultCacheControl) {
          for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
          if (defaultCacheControl && !ctx.response.get('Cache-Control')) ctx.set('Cache-Control', defaultCacheControl);
          if (body !== undefined) ctx.body = body;
        },
      };
    },
  };
}

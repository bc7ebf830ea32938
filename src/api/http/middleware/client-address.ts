/**
 * The Koa side of the client address (src/api/net/client-address-key.ts): the TCP peer and X-Forwarded-For of
 * one request. Koa's own `ctx.ip` is not used: in proxy mode it believes any sender's header.
 */
import type { Context } from 'koa';
import { clientAddressKey, type TrustedProxy } from '../../net/client-address-key.js';

export type { TrustedProxy } from '../../net/client-address-key.js';

/** The counting key of a Koa request (ctx.ip is not used: Koa's proxy mode believes any sender's header). */
export function clientAddressOf(ctx: Context, trusted: readonly TrustedProxy[]): string {
  return clientAddressKey(
    ctx.req.socket.remoteAddress,
    ctx.req.headers['x-forwarded-for'] as string | undefined,
    trusted,
  );
}

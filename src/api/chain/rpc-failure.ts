/**
 * A failed RPC call as it may travel on (an AppError's `cause`, a log line, a reason stored or answered):
 * the error's name, viem's short message and details, and the endpoint, every URL cut to scheme, host and
 * port. viem's
 * own errors quote the endpoint whole (`URL: https://…/v2/<key>`) in their message and keep it in `url`;
 * the returned error has neither, and no `cause` chain that could.
 *
 * Does not defend: an endpoint that echoes its key in the body of an error response (the details keep
 * what the node answered, URLs in it cut).
 */
import { redactUrl, redactUrlsIn } from '../../shared/redact-url.js';

export class RpcFailure extends Error {
  override readonly name = 'RpcFailure';
  /** The class name of the error the RPC call failed with (`HttpRequestError`, `TimeoutError`, …). */
  readonly kind: string;

  constructor(kind: string, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** The error an RPC call failed with, made safe to keep: see the module comment. */
export function rpcFailure(err: unknown): RpcFailure {
  if (!(err instanceof Error)) return new RpcFailure('unknown', 'the RPC call failed');
  const e = err as Error & { shortMessage?: unknown; details?: unknown; url?: unknown };
  const short = typeof e.shortMessage === 'string' ? e.shortMessage : e.message.split('\n')[0]!;
  const details = typeof e.details === 'string' && e.details !== '' ? ` (${e.details})` : '';
  const url = endpointOf(err);
  const endpoint = url ? `; endpoint ${redactUrl(url)}` : '';
  return new RpcFailure(e.name, redactUrlsIn(`${short}${details}`.slice(0, 500)) + endpoint);
}

/** The endpoint viem names in the error or one of its causes (`HttpRequestError.url`, a few levels down). */
function endpointOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const url = (current as { url?: unknown }).url;
    if (typeof url === 'string') return url;
    current = current.cause;
  }
  return undefined;
}

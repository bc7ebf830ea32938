/**
 * HTTP client of an x402 facilitator: `POST /verify`, `POST /settle`, `GET /supported` (reply shapes accepted:
 * docs/adr/0004-x402-wire-and-koa-middleware.md). Outcomes are values, never exceptions:
 *   - `ok`          — isValid:true / success:true (with a transaction hash) / a well-formed supported list;
 *   - `rejected`    — isValid:false / success:false, with the facilitator's reason (also on a 4xx whose JSON
 *                     body is such a reply);
 *   - `unavailable` — network error, timeout, redirect, 5xx, any other non-2xx, or a 2xx whose body does not
 *                     parse as the expected reply.
 *
 * Defends against: a down, slow, redirecting or confused facilitator being read as approval — only a
 * schema-valid 2xx reply can produce `ok`. Does not defend against a lying facilitator (it is trusted to
 * check signatures and to broadcast; the chain's nonce is the final guard against double spending).
 */
import type { z } from 'zod';
import { boundedFetchJson, type FetchLike } from './bounded-fetch.js';
import { redactUrlsIn } from '../shared/redact-url.js';
import {
  facilitatorSettleReplySchema,
  facilitatorSupportedReplySchema,
  facilitatorVerifyReplySchema,
  type FacilitatorSettleReply,
  type FacilitatorVerifyReply,
  type FacilitatorSupportedReply,
  type PaymentRequirements,
} from './wire-schemas.js';

export const DEFAULT_VERIFY_TIMEOUT_MS = 10_000;
export const DEFAULT_SETTLE_TIMEOUT_MS = 30_000;
export const DEFAULT_SUPPORTED_TIMEOUT_MS = 10_000;

export interface FacilitatorClientOptions {
  /** Base URL; `/verify`, `/settle`, `/supported` are appended (trailing slashes are dropped). */
  url: string;
  fetch?: FetchLike;
  verifyTimeoutMs?: number;
  settleTimeoutMs?: number;
  supportedTimeoutMs?: number;
  /** Extra headers per call (e.g. facilitator authentication). */
  headers?: () => Record<string, string> | Promise<Record<string, string>>;
}

/** What `/verify` and `/settle` are sent: the payment as decoded and the seller's own requirements. */
export interface FacilitatorRequest {
  x402Version: 1 | 2;
  paymentPayload: unknown;
  paymentRequirements: PaymentRequirements | Record<string, unknown>;
}

export type VerifyOutcome =
  | { kind: 'ok'; payer: string | undefined }
  | { kind: 'rejected'; reason: string; message: string | undefined; payer: string | undefined }
  | { kind: 'unavailable'; cause: string };

export type SettleOutcome =
  | { kind: 'ok'; settlement: FacilitatorSettleReply }
  | { kind: 'rejected'; reason: string; settlement: FacilitatorSettleReply | undefined }
  | { kind: 'unavailable'; cause: string };

export type SupportedOutcome =
  { kind: 'ok'; supported: FacilitatorSupportedReply } | { kind: 'unavailable'; cause: string };

export interface FacilitatorClient {
  readonly url: string;
  verify(request: FacilitatorRequest): Promise<VerifyOutcome>;
  settle(request: FacilitatorRequest): Promise<SettleOutcome>;
  supported(): Promise<SupportedOutcome>;
}

/**
 * The official `FacilitatorClient` shape of `@x402/core` (an `HTTPFacilitatorClient`, an in-process
 * `x402Facilitator`, or any object with these methods). Replies are treated as untrusted like HTTP replies.
 */
export interface FacilitatorLike {
  verify(paymentPayload: never, paymentRequirements: never): Promise<unknown>;
  settle(paymentPayload: never, paymentRequirements: never): Promise<unknown>;
}

type Parsed<S extends z.ZodType> =
  { kind: 'parsed'; status: number; reply: z.output<S> } | { kind: 'unavailable'; cause: string };

/** A schema-valid verify reply as an outcome; a positive reply only counts with a 2xx status. */
function verifyOutcome(reply: FacilitatorVerifyReply, status: number): VerifyOutcome {
  if (reply.isValid && status < 300) return { kind: 'ok', payer: reply.payer ?? undefined };
  if (reply.isValid) return { kind: 'unavailable', cause: `HTTP ${status} with isValid:true` };
  return {
    kind: 'rejected',
    reason: reply.invalidReason || 'invalid_payment',
    message: reply.invalidMessage ?? undefined,
    payer: reply.payer ?? undefined,
  };
}

/** A schema-valid settle reply as an outcome; a success only counts with a 2xx status. */
function settleOutcome(reply: FacilitatorSettleReply, status: number): SettleOutcome {
  if (reply.success && status < 300) return { kind: 'ok', settlement: reply };
  if (reply.success) return { kind: 'unavailable', cause: `HTTP ${status} with success:true` };
  return { kind: 'rejected', reason: reply.errorReason || 'settlement_failed', settlement: reply };
}

export function createFacilitatorClient(options: FacilitatorClientOptions): FacilitatorClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch: FetchLike | undefined = options.fetch; // undefined: the keep-alive pool (./pooled-request.ts)

  async function call<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    timeoutMs: number,
    schema: S,
  ): Promise<Parsed<S>> {
    const headers = options.headers ? await options.headers() : {};
    const result = await boundedFetchJson({ fetch: doFetch, method, url: `${base}${path}`, body, headers, timeoutMs });
    if (result.kind === 'failed') return { kind: 'unavailable', cause: result.cause };
    if (result.status >= 500) return { kind: 'unavailable', cause: `HTTP ${result.status}` };
    const parsed = schema.safeParse(result.json);
    if (result.status >= 200 && result.status < 300) {
      return parsed.success
        ? { kind: 'parsed', status: result.status, reply: parsed.data }
        : { kind: 'unavailable', cause: `malformed ${path} reply (HTTP ${result.status})` };
    }
    // A 4xx counts as a rejection only when its body is a well-formed negative reply.
    if (parsed.success) return { kind: 'parsed', status: result.status, reply: parsed.data };
    return { kind: 'unavailable', cause: `HTTP ${result.status}` };
  }

  return {
    url: base,

    async verify(request) {
      const r = await call(
        'POST',
        '/verify',
        request,
        options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS,
        facilitatorVerifyReplySchema,
      );
      return r.kind === 'unavailable' ? r : verifyOutcome(r.reply, r.status);
    },

    async settle(request) {
      const r = await call(
        'POST',
        '/settle',
        request,
        options.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS,
        facilitatorSettleReplySchema,
      );
      return r.kind === 'unavailable' ? r : settleOutcome(r.reply, r.status);
    },

    async supported() {
      const r = await call(
        'GET',
        '/supported',
        undefined,
        options.supportedTimeoutMs ?? DEFAULT_SUPPORTED_TIMEOUT_MS,
        facilitatorSupportedReplySchema,
      );
      if (r.kind === 'unavailable') return r;
      if (r.status >= 300) return { kind: 'unavailable', cause: `HTTP ${r.status}` };
      return { kind: 'ok', supported: r.reply };
    },
  };
}

/**
 * Settles a promise within `ms`, or reports the time-out; a throw becomes a failure, never an exception. The
 * failure's text has its URLs cut to scheme, host and port: a facilitator object that talks to a chain
 * through viem throws messages that quote the RPC endpoint, key included, and the cause ends up in logs.
 */
function withDeadline(
  call: () => Promise<unknown>,
  ms: number,
): Promise<{ kind: 'value'; value: unknown } | { kind: 'failed'; cause: string }> {
  // One promise settled by whichever comes first (no race of three promises, no async wrapper): the call
  // answers on every request, so what it costs besides the call is paid on every request too.
  return new Promise((resolve) => {
    const failed = (err: unknown) => {
      clearTimeout(timer);
      resolve({ kind: 'failed', cause: redactUrlsIn(err instanceof Error ? err.message : String(err)) });
    };
    const timer = setTimeout(() => resolve({ kind: 'failed', cause: `timed out after ${ms} ms` }), ms);
    let pending: Promise<unknown>;
    try {
      pending = Promise.resolve(call());
    } catch (err) {
      return failed(err);
    }
    pending.then((value) => {
      clearTimeout(timer);
      resolve({ kind: 'value', value });
    }, failed);
  });
}

/**
 * Our client interface over a facilitator object: the same outcomes as over HTTP — a throw, a time-out or a
 * reply that fails the schema is `unavailable`; only a schema-valid positive reply is `ok`.
 */
export function wrapFacilitatorObject(
  facilitator: FacilitatorLike,
  options: { verifyTimeoutMs?: number; settleTimeoutMs?: number; label?: string } = {},
): FacilitatorClient {
  const call = facilitator as unknown as {
    verify(p: unknown, r: unknown): Promise<unknown>;
    settle(p: unknown, r: unknown): Promise<unknown>;
    getSupported?(): Promise<unknown>;
  };
  /** `verify` or `settle` on the object within `timeoutMs`, its reply checked like an HTTP 200's. */
  async function callObject<S extends z.ZodType>(
    op: 'verify' | 'settle',
    request: FacilitatorRequest,
    timeoutMs: number,
    schema: S,
  ): Promise<Parsed<S>> {
    const r = await withDeadline(() => call[op](request.paymentPayload, request.paymentRequirements), timeoutMs);
    if (r.kind === 'failed') return { kind: 'unavailable', cause: r.cause };
    const parsed = schema.safeParse(r.value);
    return parsed.success
      ? { kind: 'parsed', status: 200, reply: parsed.data }
      : { kind: 'unavailable', cause: `malformed ${op} reply` };
  }

  return {
    url: options.label ?? 'in-process',

    async verify(request) {
      const timeoutMs = options.verifyTimeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS;
      const r = await callObject('verify', request, timeoutMs, facilitatorVerifyReplySchema);
      return r.kind === 'unavailable' ? r : verifyOutcome(r.reply, r.status);
    },

    async settle(request) {
      const timeoutMs = options.settleTimeoutMs ?? DEFAULT_SETTLE_TIMEOUT_MS;
      const r = await callObject('settle', request, timeoutMs, facilitatorSettleReplySchema);
      return r.kind === 'unavailable' ? r : settleOutcome(r.reply, r.status);
    },

    async supported() {
      if (typeof call.getSupported !== 'function')
        return { kind: 'unavailable', cause: 'the facilitator object has no getSupported()' };
      const r = await withDeadline(() => call.getSupported!(), DEFAULT_SUPPORTED_TIMEOUT_MS);
      if (r.kind === 'failed') return { kind: 'unavailable', cause: r.cause };
      const parsed = facilitatorSupportedReplySchema.safeParse(r.value);
      return parsed.success
        ? { kind: 'ok', supported: parsed.data }
        : { kind: 'unavailable', cause: 'malformed supported reply' };
    },
  };
}

/**
 * The facilitator a seller configured: the object it passed (wrapped as above), else a client of its
 * facilitator URL, else none. The Koa middleware and the gate resolve theirs alike.
 */
export function resolveFacilitator(
  object: FacilitatorLike | undefined,
  config: { facilitatorUrl?: string | undefined; verifyTimeoutMs?: number; settleTimeoutMs?: number },
  fetch: FetchLike | undefined,
): FacilitatorClient | undefined {
  const timeouts = { verifyTimeoutMs: config.verifyTimeoutMs, settleTimeoutMs: config.settleTimeoutMs };
  if (object) return wrapFacilitatorObject(object, timeouts);
  return config.facilitatorUrl
    ? createFacilitatorClient({ url: config.facilitatorUrl, fetch, ...timeouts })
    : undefined;
}

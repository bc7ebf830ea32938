/**
 * The `payment-identifier` store kept by the platform (PostgreSQL behind the API's routes,
 * src/api/sellers/payment-ids/): the middleware calls `POST {api_url}/v1/payment-ids/{begin,complete,release}`
 * with its seller PAT (its ids are its seller's), the gate `POST /v1/gate/payment-ids/…` with its gate PAT and
 * the endpoint each id was used on (the key's scope). Every call is bounded in time and size
 * (../bounded-fetch.ts) and every reply parsed with the shared schema (src/shared/payment-identifier-wire.ts).
 *
 * Defends against: a slow or failing platform holding a paid request (the deadline; `begin` then throws, and
 * the rule answers 503 without taking the payment); a reply of the wrong shape being taken for an answer.
 * Does not defend against: a `complete` lost after settlement (the claim then stays pending until its TTL:
 * retries see 409 in flight, then the id is free and a resent payload fails on chain).
 */
import { boundedFetchJson, type FetchLike } from '../bounded-fetch.js';
import {
  MAX_STORED_ANSWER_BYTES,
  paymentIdBeginReplySchema,
  paymentIdDoneReplySchema,
} from '../../shared/payment-identifier-wire.js';
import type { BeginOutcome, PaymentIdentifierStore, PaymentIdKey, StoredAnswer } from './payment-identifier-store.js';

export interface PlatformStoreOptions {
  apiUrl: string;
  token: string;
  fetch: FetchLike | undefined;
  timeoutMs: number;
  routes: { begin: string; complete: string; release: string };
  /** Whether the key's scope is sent as `endpoint_id` (the gate) or left to the PAT (the middleware). */
  scopeIsEndpoint: boolean;
}

export class PaymentIdentifierStoreError extends Error {
  override readonly name = 'PaymentIdentifierStoreError';
}

export class PlatformPaymentIdentifierStore implements PaymentIdentifierStore {
  constructor(private readonly options: PlatformStoreOptions) {}

  async begin(key: PaymentIdKey, fingerprint: string, pendingTtlSeconds: number): Promise<BeginOutcome> {
    const json = await this.call(this.options.routes.begin, {
      ...this.keyBody(key, fingerprint),
      pending_ttl_seconds: Math.min(Math.max(1, Math.ceil(pendingTtlSeconds)), 86_400),
    });
    const reply = paymentIdBeginReplySchema.safeParse(json);
    if (!reply.success) throw new PaymentIdentifierStoreError('unexpected begin reply');
    const { outcome, answer } = reply.data;
    return outcome === 'stored' ? { kind: 'stored', answer: answer! } : { kind: outcome };
  }

  async complete(key: PaymentIdKey, fingerprint: string, answer: StoredAnswer): Promise<void> {
    await this.done(this.options.routes.complete, { ...this.keyBody(key, fingerprint), answer });
  }

  async release(key: PaymentIdKey, fingerprint: string): Promise<void> {
    await this.done(this.options.routes.release, this.keyBody(key, fingerprint));
  }

  private keyBody(key: PaymentIdKey, fingerprint: string): Record<string, unknown> {
    return {
      ...(this.options.scopeIsEndpoint ? { endpoint_id: key.scope } : {}),
      route: key.route.slice(0, 2048),
      id: key.id,
      fingerprint,
    };
  }

  private async done(route: string, body: Record<string, unknown>): Promise<void> {
    if (!paymentIdDoneReplySchema.safeParse(await this.call(route, body)).success)
      throw new PaymentIdentifierStoreError('unexpected reply');
  }

  private async call(route: string, body: Record<string, unknown>): Promise<unknown> {
    const result = await boundedFetchJson({
      fetch: this.options.fetch,
      method: 'POST',
      url: `${this.options.apiUrl}${route}`,
      body,
      headers: { authorization: `Bearer ${this.options.token}` },
      timeoutMs: this.options.timeoutMs,
      maxBytes: Math.ceil(MAX_STORED_ANSWER_BYTES / 3) * 4 + 16_384,
    });
    if (result.kind === 'failed') throw new PaymentIdentifierStoreError(`platform unreachable: ${result.cause}`);
    if (result.status !== 200) throw new PaymentIdentifierStoreError(`platform answered ${result.status}`);
    return result.json;
  }
}

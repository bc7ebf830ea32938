/**
 * The gate's `payment-identifier` store (docs/gate.md#payment-identifier), one for every seller it sells:
 * GATE_PAYMENT_ID_STORE=platform (the default) keeps ids in the platform's PostgreSQL through
 * `/v1/gate/payment-ids/…` with the gate bearer, each under the seller of the endpoint it was used on, so every
 * gate process shares them; `memory` keeps them in this process only.
 *
 * Defends against: a retry reaching another gate process paying again (platform store). Does not defend
 * against: a platform outage — a payment carrying an id is then refused with 503, nothing paid.
 */
import type { FetchLike } from '../x402/bounded-fetch.js';
import { checkPaymentIdentifier } from '../x402/seller/payment-identifier-options.js';
import type { PaymentIdentifierStore } from '../x402/seller/payment-identifier-store.js';
import { createPaymentIdentifierStore } from '../x402/seller/payment-identifier-stores.js';
import type { GateConfig } from './gate-config.js';

export function gatePaymentIdStore(config: GateConfig, fetch: FetchLike | undefined): PaymentIdentifierStore {
  const problems: string[] = [];
  const paymentIdentifier = checkPaymentIdentifier({ store: config.paymentId.store }, problems);
  return createPaymentIdentifierStore(
    { paymentIdentifier, apiUrl: config.apiUrl, token: config.token, platformTimeoutMs: config.platformTimeoutMs },
    {
      fetch,
      routes: {
        begin: '/v1/gate/payment-ids/begin',
        complete: '/v1/gate/payment-ids/complete',
        release: '/v1/gate/payment-ids/release',
      },
      scopeIsEndpoint: true,
    },
  );
}

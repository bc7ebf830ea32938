/**
 * A claimed payment in flight through the paywall's rules 6 to 8 (./paid-request.ts), and what each step after the
 * paid work is given: the paywall's dependencies and its outcome counter.
 *
 * Defends: a claim released after it settled, or kept after it failed — `settled` and `idKept` are the one record of
 * whether the replay guard's and the payment-identifier's claims may still be released.
 */
import type { FacilitatorClient as Facilitator } from '../facilitator-client.js';
import type { RequestOutcome } from './middleware-metrics.js';
import type { PaidRequest, PaidRequestDeps, PaidRequestPort } from './paid-request-port.js';
import type { IdClaim } from './payment-identifier-rule.js';
import type { PaymentMatch, RouteTerms } from './payment-terms.js';
import type { ResolvedX402Config } from './seller-options.js';

export type Match = Extract<PaymentMatch, { kind: 'match' }>;
export type SettleOutcome = Awaited<ReturnType<Facilitator['settle']>>;

/** A claimed payment on its way through rules 6 to 8; `settled` once it may no longer be released. */
export interface Paid {
  config: ResolvedX402Config;
  /** The facilitator of the network the payment is on (undefined: local-only mode). */
  facilitator: Facilitator | undefined;
  req: PaidRequest;
  port: PaidRequestPort;
  terms: RouteTerms;
  match: Match;
  endpointId: string | undefined;
  settled: boolean;
  /** The payment's `payment-identifier` claim; `idKept` once settled (the claim is then not released). */
  idClaim: IdClaim | undefined;
  idKept: boolean;
}

/** What a step after the paid work uses: the paywall's dependencies and its outcome counter. */
export interface StepContext {
  deps: PaidRequestDeps;
  count: (outcome: RequestOutcome) => void;
}

/**
 * The error lists several catalogue entries share, named once: a route's `errors` spreads the list of the
 * steps it takes (retiring a key, signing a payment, fetching from the seller's origin, taking a ledger row)
 * and adds its own codes. What a route answers by the object its path names (a wallet, a seller, an agent…) is
 * added by ./openapi-errors.ts, which also orders and deduplicates the codes.
 *
 * Defends: two routes that take the same step listing different codes for it. Does not defend: a list that
 * misses a code the step answers (the OpenAPI reply test catches those its flows produce).
 */
import type { ErrorCode } from '../../../shared/error-codes.js';

/** A route that asks the signer to sign. */
const SIGNER: ErrorCode[] = ['signer_refused', 'signer_limit_exceeded', 'signer_unavailable', 'hsm_unsupported'];

/**
 * A signer call that is not a payment's (src/api/signing/signer-call-admission.ts): the tenant's share of the
 * process's places taken, the process's queue full, the signer out of reach.
 */
export const SIGNER_CALL: ErrorCode[] = ['signer_calls_exceeded', 'signer_overloaded', 'signer_unavailable'];

/**
 * A read of the chain's RPC (src/api/chain/chain-read-admission.ts): the tenant's share of the process's places
 * taken, the process's queue full, the RPC out of reach.
 */
export const CHAIN_READ: ErrorCode[] = ['chain_reads_exceeded', 'chain_busy', 'chain_unavailable'];

/**
 * Rotating or revoking a wallet's key: refused while its owner-signed policy does not allow the key's
 * destruction, or its address holds USDC (or its balance is unknown).
 */
export const KEY_RETIREMENT: ErrorCode[] = [
  'key_destruction_not_allowed',
  'wallet_has_balance',
  'balance_unknown',
  ...CHAIN_READ,
  ...SIGNER_CALL,
];

/** Signing a payment or a transfer: the policy's decision, the Idempotency-Key, the signer. */
export const PAYMENT_SIGNING: ErrorCode[] = [
  ...SIGNER,
  'invalid_idempotency_key',
  'idempotency_key_conflict',
  'policy_denied',
  'MGMT_6014',
];

/**
 * A payment's place among the process's payments at work (src/api/pay/pay-admission.ts): its tenant's share and
 * queue full, or the process's. (`request_abandoned` is never read: its client has gone.)
 */
export const PAY_ADMISSION: ErrorCode[] = ['pay_concurrency_exceeded', 'pay_overloaded'];

/** A fetch from the seller's origin (its well-known file, its OpenAPI document). */
export const ORIGIN_FETCH: ErrorCode[] = [
  'origin_unreachable',
  'origin_redirect_refused',
  'origin_not_public',
  'origin_port_refused',
  'origin_response_too_large',
];

/**
 * One reported ledger row: its seller suspended, its endpoint unknown, its network or amount refused, its seller
 * at its pending-row cap or its budget of rejected rows.
 */
export const LEDGER_ROW: ErrorCode[] = [
  'seller_suspended',
  'endpoint_not_found',
  'network_not_supported',
  'unstorable_value',
  'ledger_pending_limit',
  'ledger_rejected_budget_exhausted',
];

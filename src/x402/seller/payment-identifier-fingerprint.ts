/**
 * The fingerprint a `payment-identifier` id is bound to: sha256 of a canonical JSON (keys sorted at every
 * level) of the payer the signed payload names, the method, the path and query, the payment requirements the
 * payload accepted, a sha256 of the request body, and a sha256 of the whole payment payload — its signature
 * included. Pure.
 *
 * Why the whole signed payload and not payer + terms + body alone: the rule looks the id up *before* the
 * facilitator verifies anything, so a payer address in the payload is only a claim; anyone who learns an id
 * and a payer could write that claim with a made-up signature. The stored answer goes only to a request that
 * carries the very payment that settled (the signature's bytes, which only the payer could make, or a copy of
 * them), for the same request. An id alone, or an id with another payment, never gets the answer.
 *
 * Does not defend against: a copy of the settled payment header itself (its holder could also have read the
 * answer it bought); two different requests hashing alike (sha256).
 */
import { hash } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements } from '../wire-schemas.js';

export interface FingerprintInput {
  payment: PaymentPayload;
  payer: string;
  method: string;
  /** Path and query, as the buyer asked. */
  target: string;
  /** The requirements the payload accepted (the route's entry it matched). */
  accepted: PaymentRequirements | Record<string, unknown>;
  /** sha256 hex of the request body (or of what stands for it, see the adapters). */
  bodySha256: string;
}

/** JSON with object keys sorted at every level (arrays keep their order; undefined members are left out). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`;
  const members = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${members.join(',')}}`;
}

export function paymentFingerprint(input: FingerprintInput): string {
  return bodySha256(
    canonicalJson({
      payer: input.payer.startsWith('0x') ? input.payer.toLowerCase() : input.payer,
      method: input.method.toUpperCase(),
      target: input.target,
      accepted: input.accepted,
      body: input.bodySha256,
      payment: bodySha256(canonicalJson(input.payment)),
    }),
  );
}

/**
 * sha256 hex of a body (empty when there is none): a request's, a paid response's content hash, a fingerprint's
 * canonical JSON. One-shot, no Hash object per call (under half the cost of createHash().update().digest()).
 */
export function bodySha256(body: Buffer | string | undefined): string {
  return hash('sha256', body ?? '', 'hex');
}

/**
 * What one re-check of a proof of control decides (pure: no clock, no I/O; ./proof-rechecker.ts fetches and writes).
 * A fetch's outcome is read first (`fetchOutcomeOf`): the file served the token, a definitive failure, or a transient
 * one. Then `decideRecheck` takes that outcome, when the proof was last proven and now:
 * - `proven`: the file still serves the token — the proof's timestamp becomes now ("last proven at");
 * - `withdrawn`: a definitive failure — the file answered without the token on a line of its own, 404 or 410, the
 *   name now resolves to a refused (private) address or a refused port, a redirect — or a transient failure once the
 *   last success is older than the grace;
 * - `kept`: a transient failure (unreachable, time-out, any other non-2xx status such as 5xx, a file too large)
 *   within the grace: the proof stays as it is until the next re-check.
 *
 * Defends: a proof outliving the control it proves (an origin or a gate address that changed hands answers without
 * the token, or not at all past the grace); a proof withdrawn for a passing outage (the grace); an error of our own
 * (not an outcome of the fetch: the database, a bug) counted as the remote side's answer — it is thrown on, and the
 * claim's lease brings the proof back. Does not defend: a remote side that keeps serving the token (it is then in
 * control), or what happens between two re-checks.
 */
import { AppError } from '../../errors/app-error.js';

/** The three independent proofs: a seller's origin, a gate's URL, a gate's base domain. */
export type ProofKind = 'seller_origin' | 'gate_url' | 'gate_base_domain';

export const PROOF_KINDS: readonly ProofKind[] = ['seller_origin', 'gate_url', 'gate_base_domain'];

/** What one fetch of the verification file came to; `reason` is the fetch's error code. */
export type FetchOutcome =
  { kind: 'served' } | { kind: 'definitive'; reason: string } | { kind: 'transient'; reason: string };

export type RecheckDecision =
  { outcome: 'proven' } | { outcome: 'kept'; reason: string } | { outcome: 'withdrawn'; reason: string };

/** Codes that say the file is not (or may not be) the token's any more. */
const DEFINITIVE: ReadonlySet<string> = new Set([
  'verification_token_mismatch',
  'gate_verification_token_mismatch',
  'well_known_not_found',
  'gate_verification_not_found',
  'origin_not_public',
  'origin_port_refused',
  'origin_redirect_refused',
  // The stored address is no longer a fetchable http(s) URL (cannot happen for a stored row: the schemas).
  'invalid_request',
]);

/** Codes of a fetch that did not get an answer to judge: kept within the grace. */
const TRANSIENT: ReadonlySet<string> = new Set(['origin_unreachable', 'origin_response_too_large']);

/**
 * The outcome of a fetch that ended with `error` (undefined: it served the token). Anything but an API error of the
 * fetch is thrown on (not the remote side's doing).
 */
export function fetchOutcomeOf(error: unknown): FetchOutcome {
  if (error === undefined) return { kind: 'served' };
  if (error instanceof AppError && DEFINITIVE.has(error.code)) return { kind: 'definitive', reason: error.code };
  if (error instanceof AppError && TRANSIENT.has(error.code)) return { kind: 'transient', reason: error.code };
  throw error;
}

/** The decision of a re-check: see the header. `graceSeconds` counts from `lastProvenAt`. */
export function decideRecheck(input: {
  outcome: FetchOutcome;
  lastProvenAt: Date;
  now: Date;
  graceSeconds: number;
}): RecheckDecision {
  const { outcome } = input;
  if (outcome.kind === 'served') return { outcome: 'proven' };
  if (outcome.kind === 'definitive') return { outcome: 'withdrawn', reason: outcome.reason };
  const sinceProvenMs = input.now.getTime() - input.lastProvenAt.getTime();
  if (sinceProvenMs > input.graceSeconds * 1000) return { outcome: 'withdrawn', reason: 'grace_expired' };
  return { outcome: 'kept', reason: outcome.reason };
}

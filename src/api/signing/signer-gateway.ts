/**
 * The front's view of the signer: the protocol client plus metrics and error mapping. Signer failures
 * become AppErrors: `signer_unavailable` when the signer or its key backend (HSM `hsm_unavailable`, KMS
 * `backend_unavailable`) cannot answer; 500 `hsm_unsupported` (no Retry-After) when the HSM lacks what the
 * request needs, which retrying cannot mend; 403 `signer_refused`, naming
 * the rule (and for the per-signature maximum the limit and its max), when a payment the policy allowed
 * breaks the signer's own static limits (its configuration is its own: the front cannot know it); 429
 * `signer_limit_exceeded` with the limit, its max, headroom, window and Retry-After when the wallet is past
 * one of the signer's rolling ceilings; `internal_error` when it refused something the front should never
 * have asked. Every refusal's fields come from the signer's `details`, never from its message. The caller
 * (the pay path) gives the reservation's spend back on any of these, as for every signer failure.
 * Owner-signed policies (docs/adr/0012-owner-signed-policies.md): the signer's `policy_denied` becomes a
 * SignerPolicyDenial (../pay/ records it as a `pd_…` decision and answers 403 `policy_denied`),
 * `policy_signature_invalid` 403 (also `key_not_found` with rule `unknown_wallet`: a policy for a wallet whose key the
 * signer does not know it holds), `policy_version_stale` and `key_destruction_not_allowed` 409 of the same names, and
 * `policy_store_unavailable` 503 `signer_unavailable` (`reason` says so; `rule: no_policy_store` when the
 * signer keeps none at all).
 *
 * Defends, too: the signer's queue, shared by every tenant, filled by one tenant's calls — it answers `busy` when
 * full, and that fails whoever's payment came next. A payment's signatures are admitted per tenant before the
 * payment starts (../pay/pay-admission.ts); every other call (wallet and account keys, key destructions, the
 * policy reads, writes and receipts) waits here for a place among `bounds.inFlight`
 * (TREASURY_SIGNER_OTHER_IN_FLIGHT), a tenant's an eighth of them at most, served per tenant in turn
 * (base/fair-queue.ts); past 64 of a tenant's waiting 429 `signer_calls_exceeded`, past the process's queue or its
 * wait 503 `signer_unavailable` (`reason`). Keep TREASURY_PAY_IN_FLIGHT plus TREASURY_SIGNER_OTHER_IN_FLIGHT, times
 * the processes, below the signer's TREASURY_SIGNER_MAX_QUEUE (docs/operations.md, Pay admission).
 */
import { FairQueue, type QueueRefusal } from '../../../base/fair-queue.js';
import { SignerClient, SignerError } from '../../../signer/protocol/signer-client.js';
import type { SignerMethod, SignerParams, SignerResult } from '../../../signer/protocol/signer-protocol.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { ownerPolicyError } from './owner-policy-errors.js';

/** A payment's signatures: admitted per tenant before the payment starts (../pay/pay-admission.ts), not again here. */
const PAYMENT_METHODS: ReadonlySet<SignerMethod> = new Set<SignerMethod>([
  'sign_transfer_authorization',
  'sign_permit2_witness_transfer',
  'sign_solana_transaction',
  'sign_eip2612_permit',
]);

/** The tenant of calls made for no tenant (the retired keys' sweep, start-up): one more in the rotation. */
const NO_TENANT = '';

/** Every other signer call of this process: how many at once, and the longest wait (./signer-gateway.ts header). */
export interface SignerCallBounds {
  inFlight: number;
  waitMs: number;
}

/** One tenant's other signer calls waiting at most; one more is refused 429 `signer_calls_exceeded`. */
const OTHER_CALLS_WAITING_PER_TENANT = 64;

export class SignerGateway {
  /** The signer calls that are not a payment's: a bounded share of the signer's queue, served per tenant in turn. */
  private readonly others: FairQueue;

  constructor(
    private readonly client: SignerClient,
    private readonly metrics: TreasuryMetrics,
    private readonly bounds: SignerCallBounds = { inFlight: 64, waitMs: 10_000 },
  ) {
    this.others = new FairQueue({
      concurrency: bounds.inFlight,
      perTenantConcurrency: Math.max(1, Math.ceil(bounds.inFlight / 8)),
      perTenantWaiting: OTHER_CALLS_WAITING_PER_TENANT,
      maxWaiting: bounds.inFlight * 16,
      maxWaitMs: bounds.waitMs,
    });
  }

  /** The gateway to the signer at `config.signerSocket`, with the bounds of its calls (TREASURY_SIGNER_OTHER_IN_FLIGHT). */
  static connect(
    config: Pick<AppConfig, 'signerSocket' | 'signerTimeoutMs' | 'payAdmission'>,
    metrics: TreasuryMetrics,
  ): SignerGateway {
    return new SignerGateway(
      new SignerClient({ socketPath: config.signerSocket, timeoutMs: config.signerTimeoutMs }),
      metrics,
      { inFlight: config.payAdmission.signerOtherInFlight, waitMs: config.payAdmission.queueWaitSeconds * 1000 },
    );
  }

  /**
   * One signer call. A payment's goes straight to the signer; any other waits for its place among this process's
   * `bounds.inFlight`, `tenant`'s calls an eighth of them at most (its Treasury account; unnamed calls share one).
   */
  async call<M extends SignerMethod>(method: M, params: SignerParams<M>, tenant?: string): Promise<SignerResult<M>> {
    if (PAYMENT_METHODS.has(method)) return this.send(method, params);
    const outcome = await this.others.run(tenant ?? NO_TENANT, () => this.send(method, params));
    if (outcome.ran) return outcome.value;
    this.metrics.signerCallRefusals.inc({ reason: outcome.reason });
    throw this.refusal(outcome.reason);
  }

  private refusal(reason: QueueRefusal): AppError {
    if (reason === 'tenant_queue_full')
      return new AppError('signer_calls_exceeded', {
        fields: {
          in_flight_max: Math.max(1, Math.ceil(this.bounds.inFlight / 8)),
          queue_max: OTHER_CALLS_WAITING_PER_TENANT,
          retry_after_seconds: 1,
        },
        headers: { 'Retry-After': '1' },
      });
    return new AppError('signer_unavailable', { fields: { reason }, headers: { 'Retry-After': '1' } });
  }

  private async send<M extends SignerMethod>(method: M, params: SignerParams<M>): Promise<SignerResult<M>> {
    const stop = this.metrics.signerDuration.startTimer({ method });
    try {
      const result = await this.client.call(method, params);
      this.metrics.signerCalls.inc({ method, outcome: 'ok' });
      return result;
    } catch (err) {
      const code = err instanceof SignerError ? err.code : 'internal_error';
      this.metrics.signerCalls.inc({ method, outcome: code });
      if (code === 'hsm_unavailable' || code === 'backend_unavailable' || code === 'busy' || code === 'hsm_error') {
        throw new AppError('signer_unavailable', { headers: { 'Retry-After': '1' }, cause: err });
      }
      // The HSM cannot do this at all (a mechanism it lacks): permanent, so no Retry-After.
      if (code === 'hsm_unsupported') throw new AppError('hsm_unsupported', { cause: err });
      const policyError = err instanceof SignerError ? ownerPolicyError(err) : undefined;
      if (policyError) throw policyError;
      if (code === 'invariant_violation' && err instanceof SignerError) {
        // The rule travels as a field (signer/assert.ts); the per-signature maximum also names its limit.
        const d = err.details ?? {};
        throw new AppError('signer_refused', {
          fields: { rule: d.rule ?? null, ...(d.limit ? { limit: d.limit, max: d.max ?? null } : {}) },
          cause: err,
        });
      }
      if (code === 'limit_exceeded' && err instanceof SignerError) {
        // A rolling ceiling of the signer's own (signer/limits/): nothing was signed; the same request fits again after retry_after_seconds.
        const d = err.details ?? {};
        const retryAfter = d.retry_after_seconds ?? null;
        throw new AppError('signer_limit_exceeded', {
          fields: {
            limit: d.limit ?? null,
            max: d.max ?? null,
            headroom: d.headroom ?? null,
            window_seconds: d.window_seconds ?? null,
            retry_after_seconds: retryAfter,
          },
          headers: retryAfter === null ? {} : { 'Retry-After': String(retryAfter) },
          cause: err,
        });
      }
      throw new AppError('internal_error', { cause: err });
    } finally {
      stop();
    }
  }

  async healthy(): Promise<boolean> {
    try {
      await this.client.health();
      this.metrics.signerUp.set(1);
      return true;
    } catch {
      this.metrics.signerUp.set(0);
      return false;
    }
  }

  close(): void {
    this.client.close();
  }
}

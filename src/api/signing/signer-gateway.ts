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
 * Defends, too: the signer's queue, shared by every tenant, filled by one tenant's calls — every call that is not a
 * payment's waits for its tenant's share of places first (./signer-call-admission.ts).
 */
import { SignerClient, SignerError } from '../../../signer/protocol/signer-client.js';
import type { SignerMethod, SignerParams, SignerResult } from '../../../signer/protocol/signer-protocol.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { ownerPolicyError } from './owner-policy-errors.js';
import { PAYMENT_METHODS, SignerCallAdmission, type SignerCallBounds } from './signer-call-admission.js';

export class SignerGateway {
  /** The calls that are not a payment's: a bounded share of the signer's queue, served per tenant in turn. */
  private readonly others: SignerCallAdmission;

  constructor(
    private readonly client: SignerClient,
    private readonly metrics: TreasuryMetrics,
    bounds: SignerCallBounds = { inFlight: 64, waitMs: 10_000 },
  ) {
    this.others = new SignerCallAdmission(bounds, metrics);
  }

  /**
   * The gateway to the signer at `config.signerSocket`, with the bounds of its calls (TREASURY_SIGNER_OTHER_IN_FLIGHT)
   * and the tenant a Treasury account counts under (`tenantOf`, ./signer-call-admission.ts).
   */
  static connect(
    config: Pick<AppConfig, 'signerSocket' | 'signerTimeoutMs' | 'payAdmission'>,
    metrics: TreasuryMetrics,
    tenantOf?: SignerCallBounds['tenantOf'],
  ): SignerGateway {
    const { signerOtherInFlight, queueWaitSeconds } = config.payAdmission;
    return new SignerGateway(
      new SignerClient({ socketPath: config.signerSocket, timeoutMs: config.signerTimeoutMs }),
      metrics,
      { inFlight: signerOtherInFlight, waitMs: queueWaitSeconds * 1000, ...(tenantOf ? { tenantOf } : {}) },
    );
  }

  /**
   * One signer call. A payment's goes straight to the signer; any other waits for its place
   * (./signer-call-admission.ts), `tenant` naming whose share it takes (a Treasury or platform account id).
   */
  async call<M extends SignerMethod>(method: M, params: SignerParams<M>, tenant?: string): Promise<SignerResult<M>> {
    if (PAYMENT_METHODS.has(method)) return this.send(method, params);
    return this.others.run(method, tenant, () => this.send(method, params));
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

/**
 * The front's view of the signer: the protocol client plus metrics and error mapping. Signer failures
 * become AppErrors: `signer_unavailable` when the signer or HSM cannot answer; 403 `signer_refused`, naming
 * the rule, when a payment the policy allowed breaks the signer's own static limits (its configuration is
 * its own: the front cannot know it); `internal_error` when it refused something the front should never
 * have asked.
 */
import { SignerClient, SignerError } from '../../signer/protocol/signer-client.js';
import type { SignerMethod, SignerParams, SignerResult } from '../../signer/protocol/signer-protocol.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';

export class SignerGateway {
  constructor(
    private readonly client: SignerClient,
    private readonly metrics: TreasuryMetrics,
  ) {}

  async call<M extends SignerMethod>(method: M, params: SignerParams<M>): Promise<SignerResult<M>> {
    const stop = this.metrics.signerDuration.startTimer({ method });
    try {
      const result = await this.client.call(method, params);
      this.metrics.signerCalls.inc({ method, outcome: 'ok' });
      return result;
    } catch (err) {
      const code = err instanceof SignerError ? err.code : 'internal_error';
      this.metrics.signerCalls.inc({ method, outcome: code });
      if (code === 'hsm_unavailable' || code === 'busy' || code === 'hsm_error') {
        throw new AppError('signer_unavailable', { headers: { 'Retry-After': '1' }, cause: err });
      }
      if (code === 'invariant_violation' && err instanceof SignerError) {
        // The signer's message starts with the rule it applied (signer/assert.ts).
        throw new AppError('signer_refused', { fields: { rule: /^([a-z0-9_]+):/.exec(err.message)?.[1] ?? null }, cause: err });
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

/**
 * Fails fast while KMS is known to be unreachable: after `threshold` KMS calls in a row ended because KMS
 * did not answer (unreachable, timed out, connection lost, 5xx — not throttling, which is KMS answering),
 * calls are refused at once with `backend_unavailable` for `coolDownMs`; then one call goes through as a
 * probe, and its outcome closes or re-opens the breaker. Health checks always reach KMS (they are how
 * /readyz sees it come back) and count like any call.
 *
 * Protects against: every payment waiting the whole deadline while KMS is blackholed (a dropped SYN or a
 * hung endpoint only fails by timeout; a refused connection already fails at once).
 * Known limits: per process; during the cool-down a KMS that came back is not used until the next probe.
 */
import { SignerFault } from '../../signer-error.js';
import type { KmsFailureReason } from './kms-error-class.js';

const NOT_ANSWERING: ReadonlySet<KmsFailureReason> = new Set([
  'unreachable',
  'timeout',
  'connection_lost',
  'server_error',
]);

export class KmsBreaker {
  private consecutive = 0;
  private openUntil = 0;

  constructor(
    private readonly threshold = 3,
    private readonly coolDownMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws `backend_unavailable` while open; lets one probe through per cool-down. */
  admit(op: string): void {
    if (this.consecutive < this.threshold) return;
    const t = this.now();
    if (t < this.openUntil)
      throw new SignerFault(
        'backend_unavailable',
        `KMS ${op}: not answering (${this.consecutive} calls in a row); failing fast until it does`,
      );
    this.openUntil = t + this.coolDownMs;
  }

  succeeded(): void {
    this.consecutive = 0;
    this.openUntil = 0;
  }

  /** A call failed for good with this reason; only "KMS did not answer" counts. */
  failed(reason: KmsFailureReason): void {
    if (!NOT_ANSWERING.has(reason)) return;
    this.consecutive++;
    if (this.consecutive >= this.threshold) this.openUntil = this.now() + this.coolDownMs;
  }

  get open(): boolean {
    return this.consecutive >= this.threshold && this.now() < this.openUntil;
  }
}

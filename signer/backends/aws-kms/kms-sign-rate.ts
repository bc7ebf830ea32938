/**
 * Keeps the signer's KMS Sign calls under a configured rate (TREASURY_KMS_SIGN_RATE_PER_SECOND) before
 * they reach the SDK: KMS shares one ECC Sign/Verify request quota per AWS account and Region across
 * every caller, so the signer takes its share and queues the rest rather than meeting ThrottlingException.
 * rate-limiter-flexible's RateLimiterQueue over RateLimiterMemory, in 100 ms windows (rate/10 tokens
 * each) so that a burst cannot take two seconds' worth at a window edge; FIFO.
 *
 * Protects against: bursts that would throttle the account's other users; a wait past the call's
 * deadline (`backend_unavailable`) and an unbounded queue (`busy` past `maxQueue` waiting).
 * Known limits: per process — two signers on one account share the quota without knowing it (give
 * each its share). A waiter that gave up at its deadline still holds its place and consumes its token later.
 */
import { RateLimiterMemory, RateLimiterQueue, RateLimiterQueueError } from 'rate-limiter-flexible';
import { SignerFault } from '../../signer-error.js';

export class KmsSignRate {
  private readonly queue: RateLimiterQueue | undefined;

  /** `perSecond` 0: no limit. */
  constructor(perSecond: number, maxQueue: number) {
    if (perSecond <= 0) return;
    const windowSeconds = perSecond >= 10 ? 0.1 : 1;
    const points = Math.max(1, Math.floor(perSecond * windowSeconds));
    this.queue = new RateLimiterQueue(new RateLimiterMemory({ points, duration: windowSeconds }), {
      maxQueueSize: maxQueue,
    });
  }

  /** Resolves when this call may go to KMS; rejects when it would have to wait past `deadline` (ms since the epoch). */
  async take(deadline: number): Promise<void> {
    if (!this.queue) return;
    const remaining = deadline - Date.now();
    if (remaining <= 0)
      throw new SignerFault('backend_unavailable', 'KMS sign: deadline passed while waiting for the sign rate');
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new SignerFault(
              'backend_unavailable',
              'KMS sign: the configured sign rate leaves no room before the deadline',
            ),
          ),
        remaining,
      );
    });
    const granted = this.queue.removeTokens(1, undefined, Math.ceil(deadline / 1000));
    // Whichever loses the race must not reject unobserved (the signer exits on an unhandled rejection).
    granted.catch(() => undefined);
    expired.catch(() => undefined);
    try {
      await Promise.race([granted, expired]);
    } catch (err) {
      if (err instanceof RateLimiterQueueError)
        throw new SignerFault('busy', 'KMS sign: too many signatures waiting for the sign rate');
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

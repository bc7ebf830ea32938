/**
 * Bounds how many KMS requests this backend has on the wire at once (TREASURY_KMS_MAX_IN_FLIGHT). A call
 * waits here for a slot — the wait counts against its deadline, not against an attempt's timeout — so
 * that requests queued inside the HTTP agent are never aborted as "timed out" and sent again, which under
 * load would multiply the very traffic that made them wait.
 *
 * Protects against: a retry storm of self-inflicted timeouts when callers outnumber sockets.
 * Known limits: per process; FIFO; a waiter that reaches its deadline leaves with `backend_unavailable`.
 */
import { SignerFault } from '../../signer-error.js';

export class KmsInFlight {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  /** Runs `fn` once a slot is free, or fails with `backend_unavailable` if none frees up before `deadline` (ms since the epoch). */
  async run<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await this.wait(deadline);
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  private wait(deadline: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(
        () => {
          const at = this.waiting.indexOf(wake);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(new SignerFault('backend_unavailable', 'KMS: no request slot freed up before the deadline'));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.waiting.push(wake);
    });
  }
}

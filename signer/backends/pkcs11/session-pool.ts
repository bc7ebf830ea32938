/**
 * A fixed pool of PKCS#11 sessions, each checked out exclusively: one operation in flight per session
 * (two async operations on one session crash SoftHSM, and CKR_OPERATION_ACTIVE is not a reliable guard).
 * A session that failed mid-operation is closed and replaced, never handed out again poisoned.
 */
import pkcs11js from 'pkcs11js';

export class SessionPool {
  private readonly idle: pkcs11js.Handle[] = [];
  private readonly waiters: Array<(session: pkcs11js.Handle) => void> = [];
  private closed = false;

  constructor(
    private readonly p11: pkcs11js.PKCS11,
    private readonly slot: pkcs11js.Handle,
    size: number,
  ) {
    for (let i = 0; i < size; i++) this.idle.push(this.open());
  }

  private open(): pkcs11js.Handle {
    return this.p11.C_OpenSession(this.slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  }

  get waiting(): number {
    return this.waiters.length;
  }

  private acquire(): Promise<pkcs11js.Handle> {
    if (this.closed) return Promise.reject(new Error('session pool closed'));
    const session = this.idle.pop();
    if (session !== undefined) return Promise.resolve(session);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(session: pkcs11js.Handle): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(session);
    else this.idle.push(session);
  }

  /** Runs `fn` with an exclusive session; on failure the session is replaced before the error propagates. */
  async with<T>(fn: (session: pkcs11js.Handle) => Promise<T> | T): Promise<T> {
    let session = await this.acquire();
    try {
      const result = await fn(session);
      this.release(session);
      return result;
    } catch (err) {
      try {
        this.p11.C_CloseSession(session);
      } catch {
        /* already gone */
      }
      try {
        session = this.open();
        this.release(session);
      } catch {
        /* the token is gone; callers will see hsm_unavailable */
      }
      throw err;
    }
  }

  close(): void {
    this.closed = true;
    for (const session of this.idle.splice(0)) {
      try {
        this.p11.C_CloseSession(session);
      } catch {
        /* ignore */
      }
    }
  }
}

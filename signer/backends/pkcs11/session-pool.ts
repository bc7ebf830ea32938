/**
 * A fixed pool of PKCS#11 sessions, each checked out exclusively: one operation in flight per session.
 *
 * Protects against: two async operations on one session (measured: SIGSEGV on SoftHSM; CKR_OPERATION_ACTIVE
 * is not a reliable guard under load), and poisoned sessions — an abandoned C_SignInit, or a C_Sign that
 * failed half-way, leaves the operation active; such a session is closed and replaced, never handed out.
 * Also against requests stranded in the queue: a waiter is woken only by a session coming back, so when a
 * replacement cannot be opened and no session is left open, every waiter is answered `hsm_unavailable` at
 * once, as a new request would be (while a session is still open, waiters keep waiting for it).
 * Known limits: waiters queue without bound here (the server bounds requests before they reach the pool);
 * sessions hold no objects — unwrapped keys live on the backend's long-lived holder session. A session the
 * token failed to replace is opened again only when a request finds the pool short (no timer retries it).
 */
import type pkcs11js from 'pkcs11js';
import { SignerFault } from '../../signer-error.js';
import type { Pkcs11Module } from './pkcs11-module.js';

export class SessionPool {
  private readonly idle: pkcs11js.Handle[] = [];
  private readonly waiters: Array<{ resolve: (session: pkcs11js.Handle) => void; reject: (err: Error) => void }> = [];
  private size = 0;
  private closed = false;

  constructor(
    private readonly module: Pkcs11Module,
    private readonly slot: pkcs11js.Handle,
    private readonly capacity: number,
  ) {
    for (let i = 0; i < capacity; i++) this.idle.push(this.open());
  }

  private open(): pkcs11js.Handle {
    const session = this.module.openSession(this.slot);
    this.size++;
    return session;
  }

  /** Sessions currently open (capacity unless the token failed to give a replacement). */
  get openSessions(): number {
    return this.size;
  }

  private acquire(): Promise<pkcs11js.Handle> {
    if (this.closed) return Promise.reject(new SignerFault('hsm_unavailable', 'session pool closed'));
    const session = this.idle.pop();
    if (session !== undefined) return Promise.resolve(session);
    if (this.size < this.capacity) {
      // A replacement failed earlier (token hiccup): try again now.
      try {
        return Promise.resolve(this.open());
      } catch {
        if (this.size === 0) return Promise.reject(new SignerFault('hsm_unavailable', 'no PKCS#11 session available'));
      }
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private release(session: pkcs11js.Handle): void {
    if (this.closed) {
      this.discard(session);
      return;
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve(session);
    else this.idle.push(session);
  }

  private discard(session: pkcs11js.Handle): void {
    this.module.closeSession(session);
    this.size--;
  }

  /** Runs `fn` with an exclusive session; if `fn` throws, the session is closed and replaced. */
  async with<T>(fn: (session: pkcs11js.Handle) => Promise<T>): Promise<T> {
    const session = await this.acquire();
    let result: T;
    try {
      result = await fn(session);
    } catch (err) {
      this.discard(session);
      if (!this.closed) {
        try {
          this.release(this.open());
        } catch (cause) {
          // The token is gone: acquire() opens a session again later. With none left open, nothing would
          // ever wake the waiters: they get what a new request gets now.
          if (this.size === 0) this.failWaiters('no PKCS#11 session available', cause);
        }
      }
      throw err;
    }
    this.release(session);
    return result;
  }

  private failWaiters(message: string, cause?: unknown): void {
    for (const waiter of this.waiters.splice(0))
      waiter.reject(new SignerFault('hsm_unavailable', message, undefined, { cause }));
  }

  close(): void {
    this.closed = true;
    this.failWaiters('session pool closed');
    for (const session of this.idle.splice(0)) this.discard(session);
  }
}

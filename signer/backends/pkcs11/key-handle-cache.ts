/**
 * Cache of unwrapped key handles (HSM session objects), LRU with a TTL. It holds handles — small integers
 * naming objects inside the HSM — never key bytes. An evicted or expired entry's session object is
 * destroyed in the HSM; an entry in use is pinned and destroyed only when its last user releases it.
 *
 * Protects against: paying an unwrap per signature (a miss costs ≈4× a hit, measured on SoftHSM 2.6.1) and leaking
 * unwrapped keys inside the HSM — every cached object is destroyed on eviction, TTL, `evict` or `clear`.
 * Known limits: entries die with the holder session; max 0 disables caching (unwrap, use, destroy).
 */
import { LRUCache } from 'lru-cache';
import type pkcs11js from 'pkcs11js';

interface Entry {
  handle: pkcs11js.Handle;
  inUse: number;
  evicted: boolean;
}

export interface KeyHandleCacheOptions {
  max: number;
  ttlMs: number;
  /** Destroys the session object behind a handle (errors are the callee's to swallow). */
  destroy(handle: pkcs11js.Handle): void;
  onHit?(): void;
  onMiss?(): void;
}

export class KeyHandleCache {
  private readonly lru: LRUCache<string, Entry> | undefined;

  constructor(private readonly options: KeyHandleCacheOptions) {
    this.lru =
      options.max > 0
        ? new LRUCache<string, Entry>({
            max: options.max,
            ttl: options.ttlMs,
            ttlAutopurge: true,
            dispose: (entry) => this.retire(entry),
          })
        : undefined;
  }

  private retire(entry: Entry): void {
    entry.evicted = true;
    if (entry.inUse === 0) this.options.destroy(entry.handle);
  }

  /**
   * Runs `fn` with the handle cached under `key`, or with one made by `unwrap` (synchronous, so two
   * concurrent misses cannot both insert). The handle stays valid until `fn` settles.
   */
  async use<T>(key: string, unwrap: () => pkcs11js.Handle, fn: (handle: pkcs11js.Handle) => Promise<T>): Promise<T> {
    let entry = this.lru?.get(key);
    if (entry) this.options.onHit?.();
    else {
      this.options.onMiss?.();
      entry = { handle: unwrap(), inUse: 0, evicted: false };
      if (this.lru) this.lru.set(key, entry);
      else entry.evicted = true;
    }
    entry.inUse++;
    try {
      return await fn(entry.handle);
    } finally {
      entry.inUse--;
      if (entry.evicted && entry.inUse === 0) this.options.destroy(entry.handle);
    }
  }

  /** Drops and destroys one entry (e.g. a destroyed wallet key). */
  evict(key: string): void {
    this.lru?.delete(key);
  }

  /** Handles currently cached — for tests that prove the HSM refuses to reveal them. */
  handles(): pkcs11js.Handle[] {
    return this.lru ? [...this.lru.values()].map((e) => e.handle) : [];
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  clear(): void {
    this.lru?.clear();
  }
}

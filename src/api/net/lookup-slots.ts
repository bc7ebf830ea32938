/**
 * A bound on host-name lookups in flight in this process, for the outbound path (./vetted-fetch.ts).
 *
 * The system resolver (dns.lookup → getaddrinfo) runs on libuv's thread pool, four threads by default and shared
 * with file reads, crypto and zlib. A lookup in a zone whose nameserver drops queries holds its thread for the
 * resolver's own timeout (10 s and more), long after the caller's deadline has answered `timeout`. Without a bound,
 * a tenant naming such hosts at a steady rate queues every other pool job in the API behind those lookups.
 *
 * Defends: the thread pool, for every tenant. At most MAX_LOOKUPS_IN_FLIGHT lookups run at once (half the default
 * pool, so the other half stays free); a slot is held until the lookup itself settles, not until its caller gave
 * up, because that is how long the thread is held. A lookup that cannot get a slot before its caller's deadline
 * never starts (the caller answers `timeout` as for a slow lookup); waiters get slots in arrival order, and a
 * waiter leaves the queue at its deadline, so the queue holds no more than the requests of one deadline.
 * The same class bounds DNS queries through ./dns-resolver.ts (no pool thread; cancelled at the deadline, so a
 * dead zone holds its slot for one deadline at most): MAX_DNS_QUERIES_IN_FLIGHT in ./vetted-fetch.ts.
 * Does not defend: fairness between tenants where the system resolver is used (the sandbox, `allowPrivate`) — one
 * tenant naming dead zones can keep both slots busy; in production names go over DNS, where a tenant must keep
 * 32 dead lookups in flight to make others wait, each for one deadline. The bounds are per process, not per
 * account. Lookups made outside ./vetted-fetch.ts (the gate, the CLI) are not counted.
 */

/** Half of libuv's default thread pool (UV_THREADPOOL_SIZE 4). */
export const MAX_LOOKUPS_IN_FLIGHT = 2;

/** Hands back a held slot; calling it twice is harmless. */
export type ReleaseSlot = () => void;

interface Waiter {
  grant: (release: ReleaseSlot) => void;
}

export class LookupSlots {
  private running = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('LookupSlots: max must be a positive integer');
  }

  /** Lookups holding a slot now. */
  get inFlight(): number {
    return this.running;
  }

  /** Callers waiting for a slot now. */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * A slot, once one is free: resolves with its release, or with undefined when `signal` aborts first (already
   * aborted: at once). A waiter whose signal aborts leaves the queue and is never granted a slot.
   */
  acquire(signal: AbortSignal): Promise<ReleaseSlot | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(undefined);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter (running stays the same), or is freed.
      if (next) next.grant(this.releaser());
      else this.running--;
    };
  }
}

/** The process-wide bound every vetted lookup takes a slot from (./vetted-fetch.ts). */
export const processLookupSlots = new LookupSlots(MAX_LOOKUPS_IN_FLIGHT);

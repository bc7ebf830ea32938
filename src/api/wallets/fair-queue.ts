/**
 * One job at a time, shared fairly between tenants: each tenant has its own queue, and the single worker
 * takes one job from each tenant with work waiting in turn (round-robin: a tenant new to the rotation is placed
 * last, and the tenant whose job runs rejoins it last once that job ends). A job that waited `maxWaitMs`
 * without starting is dropped from its queue and its caller told it did not run, so nobody waits unboundedly.
 * Used for the wallet audit's full chain verifications (./wallet-history-service.ts), which are CPU-bound: one
 * at a time per process.
 *
 * Defends: one tenant's backlog delaying another tenant's first job by more than the job running now (each
 * other tenant with work waiting adds one of its jobs at most); a caller waiting behind any backlog longer than
 * `maxWaitMs`. Does not defend:
 * many tenants each with work waiting (each gets its turn; the bounded wait is what is left), nor how long a
 * job runs once started (its own bound: VERIFY_LIMIT_ROWS for the audit).
 */

/** What a caller learns of its job: its value (or its error, thrown), or that it waited too long and never ran. */
export type QueueOutcome<T> = { ran: true; value: T } | { ran: false };

interface Waiting {
  /** Runs the job and settles its caller's promise; resolves once the job settled (never rejects). */
  start(): Promise<void>;
}

export class FairQueue {
  /** Jobs waiting, per tenant in the rotation (a list emptied by jobs that gave up keeps its tenant's place). */
  private readonly waiting = new Map<string, Waiting[]>();
  /** The rotation: the tenants of `waiting`, the one served next at `head` (taken by index, compacted now and then). */
  private rotation: string[] = [];
  private head = 0;
  /** The tenant whose job runs and its jobs waiting, out of the rotation until that job ends. */
  private running: { tenant: string; jobs: Waiting[] } | undefined;

  constructor(private readonly options: { maxWaitMs: number }) {}

  /** Jobs waiting (not the running one), over every tenant. */
  get size(): number {
    let n = this.running?.jobs.length ?? 0;
    for (const jobs of this.waiting.values()) n += jobs.length;
    return n;
  }

  /** Runs `job` once it is `tenant`'s turn; `{ ran: false }` if that did not come within `maxWaitMs`. */
  run<T>(tenant: string, job: () => Promise<T>): Promise<QueueOutcome<T>> {
    return new Promise<QueueOutcome<T>>((resolve, reject) => {
      const entry: Waiting = {
        start: () => {
          clearTimeout(timer);
          // The worker moves on once the job settled, whatever it did; the caller gets what it did.
          return Promise.resolve()
            .then(job)
            .then(
              (value) => resolve({ ran: true, value }),
              (err: unknown) => reject(err as Error),
            );
        },
      };
      const timer = setTimeout(() => {
        if (this.drop(tenant, entry)) resolve({ ran: false });
      }, this.options.maxWaitMs);
      timer.unref();
      const jobs = this.queueOf(tenant);
      if (jobs) jobs.push(entry);
      else this.join(tenant, [entry]);
      this.next();
    });
  }

  /** Starts the next tenant's next job, unless one runs. */
  private next(): void {
    while (!this.running && this.head < this.rotation.length) {
      const tenant = this.rotation[this.head++]!;
      const jobs = this.waiting.get(tenant)!;
      this.waiting.delete(tenant);
      this.compact();
      const entry = jobs.shift();
      if (!entry) continue; // every job of its gave up waiting
      this.running = { tenant, jobs };
      void entry.start().finally(() => {
        // The tenant rejoins the rotation last, behind every tenant that came meanwhile, with what it has left.
        const { jobs: left } = this.running!;
        this.running = undefined;
        if (left.length > 0) this.join(tenant, left);
        this.next();
      });
    }
  }

  /** Places a tenant not in the rotation last in it. */
  private join(tenant: string, jobs: Waiting[]): void {
    this.waiting.set(tenant, jobs);
    this.rotation.push(tenant);
  }

  /** Drops the rotation's served part once it is most of the array (each tenant is moved once per pass over it). */
  private compact(): void {
    if (this.head === this.rotation.length || (this.head >= 1024 && this.head * 2 >= this.rotation.length)) {
      this.rotation = this.rotation.slice(this.head);
      this.head = 0;
    }
  }

  /** The tenant's waiting jobs, in the rotation or aside while its job runs; undefined when it has none there. */
  private queueOf(tenant: string): Waiting[] | undefined {
    return this.running?.tenant === tenant ? this.running.jobs : this.waiting.get(tenant);
  }

  /** Removes a job that has not started; false if it started (or is gone) already. */
  private drop(tenant: string, entry: Waiting): boolean {
    const jobs = this.queueOf(tenant);
    const at = jobs?.indexOf(entry) ?? -1;
    if (at < 0) return false;
    jobs!.splice(at, 1);
    return true;
  }
}

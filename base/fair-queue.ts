/**
 * Jobs shared fairly between tenants: at most `concurrency` run at once over every tenant, at most
 * `perTenantConcurrency` of one tenant; the rest wait in their tenant's own queue, and a freed place goes to the
 * tenants with work waiting in turn (round-robin: a tenant new to the rotation is placed last; a tenant whose job
 * starts goes back last while it has jobs waiting and room under its own bound, else it rejoins last once one of
 * its jobs ends). Jobs of one tenant start in the order they came. A job that can start at once starts in the
 * caller's tick, with no timer or queue entry made for it.
 * Used for the wallet audit's full chain verifications (src/api/wallets/wallet-history-service.ts: one at a time)
 * and for payments (src/api/pay/pay-admission.ts: many at once, a bounded share each).
 *
 * Defends: one tenant's backlog delaying another tenant's first job by more than the jobs running now (each other
 * tenant with work waiting adds one of its jobs at most); one tenant holding more than its share of the places; a
 * queue that grows without bound — past `perTenantWaiting` jobs of one tenant a job is refused at once, unrun, and
 * past `maxWaiting` over all the newest job of the longest backlog gives way (`queue_full`), so that tenants with
 * long backlogs cannot fill the queue against a newcomer (the newcomer is refused only when no backlog is longer
 * than its own by two); a caller waiting behind any backlog longer than `maxWaitMs`; a job whose caller went away
 * while it waited (`whenAbandoned`) — dropped unrun. Every refusal names its reason, and a job refused never ran.
 * Does not defend: many tenants each with work waiting (each gets its turn; the bounded wait is what is left), nor
 * how long a job runs once started (its own bound), nor a tenant split into many names (the caller names tenants).
 */

/** Why a job did not run. */
export type QueueRefusal = 'waited_too_long' | 'tenant_queue_full' | 'queue_full' | 'abandoned';

/** What a caller learns of its job: its value (or its error, thrown), or why it never ran. */
export type QueueOutcome<T> = { ran: true; value: T } | { ran: false; reason: QueueRefusal };

export interface FairQueueOptions {
  /** Longest a job waits for its place; then it is dropped unrun (`waited_too_long`). */
  maxWaitMs: number;
  /** Jobs running at once over every tenant (default 1). */
  concurrency?: number;
  /** Jobs of one tenant running at once (default: `concurrency`). */
  perTenantConcurrency?: number;
  /** Jobs of one tenant waiting; one more is refused at once (`tenant_queue_full`). Default: no bound. */
  perTenantWaiting?: number;
  /** Jobs waiting over every tenant; one more is refused at once (`queue_full`). Default: no bound. */
  maxWaiting?: number;
}

/**
 * Told to call `drop` if the job's caller goes away while it waits (asked only of a job that must wait); returns
 * what stops listening, called once the job starts or is refused.
 */
export type WhenAbandoned = (drop: () => void) => () => void;

interface Waiting {
  start(): void;
  refuse(reason: QueueRefusal): void;
}

interface Tenant {
  running: number;
  jobs: Waiting[];
  /** In the rotation: it has jobs waiting and room under its own bound. */
  queued: boolean;
}

export class FairQueue {
  private readonly tenants = new Map<string, Tenant>();
  /** The tenants to serve, the next at `head` (taken by index, compacted now and then). */
  private rotation: string[] = [];
  private head = 0;
  private runningJobs = 0;
  private waitingJobs = 0;
  private readonly concurrency: number;
  private readonly perTenantConcurrency: number;
  private readonly perTenantWaiting: number;
  private readonly maxWaiting: number;

  constructor(private readonly options: FairQueueOptions) {
    this.concurrency = options.concurrency ?? 1;
    this.perTenantConcurrency = Math.min(options.perTenantConcurrency ?? this.concurrency, this.concurrency);
    this.perTenantWaiting = options.perTenantWaiting ?? Infinity;
    this.maxWaiting = options.maxWaiting ?? Infinity;
  }

  /** Jobs waiting, over every tenant. */
  get size(): number {
    return this.waitingJobs;
  }

  /** Jobs running, over every tenant. */
  get running(): number {
    return this.runningJobs;
  }

  /** Runs `job` once `tenant` has a place, or refuses it unrun (see QueueRefusal); `maxWaitMs` shortens its wait. */
  run<T>(
    tenant: string,
    job: () => Promise<T>,
    whenAbandoned?: WhenAbandoned,
    maxWaitMs = this.options.maxWaitMs,
  ): Promise<QueueOutcome<T>> {
    let state = this.tenants.get(tenant);
    if (state === undefined) {
      state = { running: 0, jobs: [], queued: false };
      this.tenants.set(tenant, state);
    }
    // Room now, and nothing of this tenant's ahead of it: the rotation is empty whenever a place is free.
    if (this.runningJobs < this.concurrency && state.jobs.length === 0 && state.running < this.perTenantConcurrency) {
      this.take(state);
      return this.execute(tenant, state, job);
    }
    if (state.jobs.length >= this.perTenantWaiting) return this.refused(tenant, state, 'tenant_queue_full');
    if (this.waitingJobs >= this.maxWaiting && !this.makeRoomFor(state))
      return this.refused(tenant, state, 'queue_full');
    const tenantState = state;
    return new Promise<QueueOutcome<T>>((resolve, reject) => {
      let stopListening: (() => void) | undefined;
      const timer = setTimeout(
        () => this.drop(tenant, entry, 'waited_too_long'),
        Math.min(maxWaitMs, this.options.maxWaitMs),
      );
      timer.unref();
      const done = () => {
        clearTimeout(timer);
        stopListening?.();
      };
      const entry: Waiting = {
        start: () => {
          done();
          this.execute(tenant, tenantState, job).then(resolve, reject);
        },
        refuse: (reason) => {
          done();
          resolve({ ran: false, reason });
        },
      };
      tenantState.jobs.push(entry);
      this.waitingJobs++;
      if (!tenantState.queued && tenantState.running < this.perTenantConcurrency) this.join(tenant, tenantState);
      if (whenAbandoned) stopListening = whenAbandoned(() => this.drop(tenant, entry, 'abandoned'));
    });
  }

  /**
   * The queue is full: the tenant with the most jobs waiting gives up its newest (`queue_full`) when it has at least
   * two more waiting than the arriving job's tenant, so a full queue refuses the longest backlog, not a newcomer.
   * Walks the tenants (only when the queue is full); false when no tenant waits longer.
   */
  private makeRoomFor(arriving: Tenant): boolean {
    let longest: [string, Tenant] | undefined;
    for (const entry of this.tenants) if (!longest || entry[1].jobs.length > longest[1].jobs.length) longest = entry;
    if (!longest || longest[1].jobs.length < arriving.jobs.length + 2) return false;
    const [tenant, state] = longest;
    this.drop(tenant, state.jobs[state.jobs.length - 1]!, 'queue_full');
    return true;
  }

  private refused(tenant: string, state: Tenant, reason: QueueRefusal): Promise<QueueOutcome<never>> {
    this.forgetIfIdle(tenant, state);
    return Promise.resolve({ ran: false, reason });
  }

  private take(state: Tenant): void {
    state.running++;
    this.runningJobs++;
  }

  /** Runs a job that holds its place; the place is given back once it settled, whatever it did. */
  private async execute<T>(tenant: string, state: Tenant, job: () => Promise<T>): Promise<QueueOutcome<T>> {
    try {
      return { ran: true, value: await job() };
    } finally {
      state.running--;
      this.runningJobs--;
      if (state.jobs.length > 0 && !state.queued) this.join(tenant, state);
      else this.forgetIfIdle(tenant, state);
      this.next();
    }
  }

  /** Starts waiting jobs while places are free, one per tenant in turn. */
  private next(): void {
    while (this.runningJobs < this.concurrency && this.head < this.rotation.length) {
      const tenant = this.rotation[this.head++]!;
      this.compact();
      const state = this.tenants.get(tenant)!;
      state.queued = false;
      const entry = state.jobs.shift();
      if (!entry) {
        this.forgetIfIdle(tenant, state); // every job of its was dropped while it waited in the rotation
        continue;
      }
      this.waitingJobs--;
      this.take(state);
      // Back of the line while it has more waiting and room under its own bound; else when one of its jobs ends.
      if (state.jobs.length > 0 && state.running < this.perTenantConcurrency) this.join(tenant, state);
      entry.start();
    }
  }

  /** Places a tenant not in the rotation last in it. */
  private join(tenant: string, state: Tenant): void {
    state.queued = true;
    this.rotation.push(tenant);
  }

  /** Drops the rotation's served part once it is most of the array (each tenant is moved once per pass over it). */
  private compact(): void {
    if (this.head === this.rotation.length || (this.head >= 1024 && this.head * 2 >= this.rotation.length)) {
      this.rotation = this.rotation.slice(this.head);
      this.head = 0;
    }
  }

  /** A tenant with nothing running, waiting or in the rotation is forgotten (memory bounded by the live ones). */
  private forgetIfIdle(tenant: string, state: Tenant): void {
    if (state.running === 0 && state.jobs.length === 0 && !state.queued) this.tenants.delete(tenant);
  }

  /** Refuses a job that has not started (no-op once it started or was refused). */
  private drop(tenant: string, entry: Waiting, reason: QueueRefusal): void {
    const state = this.tenants.get(tenant);
    const at = state?.jobs.indexOf(entry) ?? -1;
    if (at < 0) return;
    state!.jobs.splice(at, 1);
    this.waitingJobs--;
    this.forgetIfIdle(tenant, state!);
    entry.refuse(reason);
  }
}

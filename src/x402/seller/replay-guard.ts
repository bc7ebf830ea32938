/**
 * In-process guard against one payment being used twice at once or again after it settled: an authorization
 * (network, payer, nonce) is claimed while its request is in flight and remembered after settlement until it
 * expires (its validBefore, at least 10 minutes, at most 24 hours).
 *
 * Settled payments are remembered in generations, oldest first, each of at most an eighth of `maxEntries`: a
 * generation whose every payment has expired is dropped whole, and when the guard is full the oldest is
 * forgotten whole — never an entry at a time. (Deleting the oldest entry of one large Map on every claim made
 * V8 walk every entry deleted before it, again at each claim: a full guard doubled a paid request's CPU;
 * docs/performance.md, "The replay guard when full".) A claim looks a key up in at most nine Maps.
 *
 * Defends against: two concurrent requests carrying the same payment header both getting the content while
 * only one settles (x402 issue #1805), and cheap replays of a settled header within one process.
 * Does not defend against: replays across processes or after a restart, or when more than `maxEntries`
 * payments are remembered (the oldest generation is forgotten; in-flight claims never are) — the token's
 * on-chain nonce is the final guard, the facilitator's verify or settle then fails and the buyer gets a 402.
 */

/** Settled payments of one generation, by key: until when each is refused (ms since the epoch). */
interface Generation {
  untilMs: Map<string, number>;
  /** The latest `untilMs` in it: once past, the whole generation has expired. */
  lastUntilMs: number;
}

const GENERATIONS = 8;

export class ReplayGuard {
  private readonly inFlight = new Set<string>();
  private readonly generations: Generation[] = [];
  private readonly generationSize: number;
  private settledCount = 0;

  constructor(
    private readonly clock: () => number = Date.now,
    private readonly maxEntries = 100_000,
  ) {
    this.generationSize = Math.max(1, Math.ceil(maxEntries / GENERATIONS));
  }

  /** True when the key was free and is now claimed by the caller. */
  claim(key: string): boolean {
    if (this.inFlight.has(key)) return false;
    const now = this.clock();
    this.dropExpired(now);
    const until = this.settledUntil(key);
    if (until !== undefined && until > now) return false;
    while (this.size >= this.maxEntries && this.generations.length > 0) this.dropOldest();
    this.inFlight.add(key);
    return true;
  }

  /** The payment was not used (no settlement): it may be presented again. */
  release(key: string): void {
    this.inFlight.delete(key);
  }

  /** The payment settled: refuse it until `validBeforeSeconds` (bounded to [10 min, 24 h] from now). */
  settled(key: string, validBeforeSeconds: number | undefined): void {
    const now = this.clock();
    const wanted = validBeforeSeconds === undefined ? now + 86_400_000 : validBeforeSeconds * 1000;
    const untilMs = Math.min(Math.max(wanted, now + 600_000), now + 86_400_000);
    this.inFlight.delete(key);
    let newest = this.generations[this.generations.length - 1];
    if (!newest || newest.untilMs.size >= this.generationSize) {
      newest = { untilMs: new Map(), lastUntilMs: 0 };
      this.generations.push(newest);
    }
    // A key settled again (claimed after its earlier settlement expired) is found in the newest first.
    if (!newest.untilMs.has(key)) this.settledCount++;
    newest.untilMs.set(key, untilMs);
    newest.lastUntilMs = Math.max(newest.lastUntilMs, untilMs);
    while (this.settledCount > this.maxEntries && this.generations.length > 1) this.dropOldest();
  }

  /** Payments in flight and settled ones remembered. */
  get size(): number {
    return this.inFlight.size + this.settledCount;
  }

  /** Until when the newest settlement of `key` is refused, if one is remembered. */
  private settledUntil(key: string): number | undefined {
    for (let i = this.generations.length - 1; i >= 0; i--) {
      const until = this.generations[i]!.untilMs.get(key);
      if (until !== undefined) return until;
    }
    return undefined;
  }

  private dropExpired(now: number): void {
    while (this.generations.length > 0 && this.generations[0]!.lastUntilMs <= now) this.dropOldest();
  }

  private dropOldest(): void {
    const oldest = this.generations.shift();
    if (oldest) this.settledCount -= oldest.untilMs.size;
  }
}

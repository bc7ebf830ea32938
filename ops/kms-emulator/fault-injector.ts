/**
 * Fault injection for the KMS emulator, so backend fault tests exercise real failures through the real
 * SDK instead of mocks. Rules are added programmatically (`emulator.faults.throttle({ count: 3 })`) or
 * over the control endpoint (POST /__emulator/faults with the same JSON), and cleared by `reset()`.
 *
 * Modes (each rule may be limited to some `operations`, to the next `count` matching requests, and/or to
 * a random `fraction` of them; without count or fraction it applies to every matching request):
 * - `throttle`: ThrottlingException (400), which the SDK retries with backoff;
 * - `fail`: KMSInternalException (500) or, with `status: 503`, DependencyTimeoutException (503);
 * - `deny`: AccessDeniedException (400), not retried by the SDK;
 * - `stall`: hold the response for `ms` milliseconds, or until `reset()` when `ms` is left out;
 * - `drop`: destroy the connection without an answer (the SDK sees a socket error);
 *   `stall` and `drop` take a `phase`: `before` (default) means the operation does not run (a stalled
 *   request released after its client went away is abandoned), `after` means it ran (a key was created,
 *   a digest was signed) and only the answer is held or lost: the "may have succeeded" case;
 * - a rate limit (`rateLimit({ perSecond, burst?, operations? })`): a token bucket that answers
 *   ThrottlingException past the rate, as the shared per-account quota does (default operations Sign
 *   and Verify, the "cryptographic operations (ECC)" quota);
 * - unreachable (`unreachable('reset' | 'refuse')`): every connection is reset on arrival, or the
 *   listening socket is closed so connections are refused, until `reachable()` or `reset()`.
 * The first rule (in the order added) that matches a request decides; the rate limit is checked after
 * the rules.
 *
 * What it does not do: it does not model AWS's real throttling algorithm or latency distribution, and a
 * stall releases on `reset()` even if `ms` was longer.
 */
import { z } from 'zod';
import { KmsError, kmsErrors } from './kms-errors.js';

const scope = {
  /** Operation names (e.g. `Sign`); all operations when left out. */
  operations: z.array(z.string().min(1).max(64)).max(64).optional(),
  /** Only the next `count` matching requests. */
  count: z.number().int().min(1).max(1_000_000).optional(),
  /** Only this fraction (0–1) of the matching requests, chosen at random. */
  fraction: z.number().min(0).max(1).optional(),
};

export const faultRuleSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('throttle'), ...scope }).strict(),
  z
    .object({ mode: z.literal('fail'), status: z.union([z.literal(500), z.literal(503)]).optional(), ...scope })
    .strict(),
  z.object({ mode: z.literal('deny'), ...scope }).strict(),
  z
    .object({
      mode: z.literal('stall'),
      ms: z.number().int().min(0).max(3_600_000).optional(),
      phase: z.enum(['before', 'after']).optional(),
      ...scope,
    })
    .strict(),
  z.object({ mode: z.literal('drop'), phase: z.enum(['before', 'after']).optional(), ...scope }).strict(),
]);
export type FaultRule = z.infer<typeof faultRuleSchema>;

export const rateLimitSchema = z
  .object({
    perSecond: z.number().positive().max(1_000_000),
    burst: z.number().int().min(1).max(1_000_000).optional(),
    operations: z.array(z.string().min(1).max(64)).max(64).optional(),
  })
  .strict();
export type RateLimit = z.infer<typeof rateLimitSchema>;

export type UnreachableMode = 'reset' | 'refuse';

/** What the emulator must do with one request. */
export type FaultDecision =
  | { kind: 'error'; error: KmsError; mode: 'throttle' | 'fail' | 'deny' | 'rate_limit' }
  | { kind: 'stall'; ms: number | undefined; phase: 'before' | 'after' }
  | { kind: 'drop'; phase: 'before' | 'after' };

type Without<R, K extends string> = R extends unknown ? Omit<R, K> : never;
type RuleOptions<M extends FaultRule['mode']> = Without<Extract<FaultRule, { mode: M }>, 'mode'>;

interface ActiveRule {
  readonly rule: FaultRule;
  remaining: number | undefined;
}

export class FaultInjector {
  private rules: ActiveRule[] = [];
  private bucket: { limit: RateLimit; tokens: number; refilledAt: number } | undefined;
  private unreachableMode: UnreachableMode | undefined;
  private readonly stalled = new Set<() => void>();
  private readonly reachabilityListeners = new Set<(mode: UnreachableMode | undefined) => void>();

  /** Adds a rule (validated with the same schema as the control endpoint). */
  add(rule: FaultRule): void {
    const parsed = faultRuleSchema.parse(rule);
    this.rules.push({ rule: parsed, remaining: parsed.count });
  }

  throttle(options: RuleOptions<'throttle'> = {}): void {
    this.add({ mode: 'throttle', ...options });
  }

  fail(options: RuleOptions<'fail'> = {}): void {
    this.add({ mode: 'fail', ...options });
  }

  deny(options: RuleOptions<'deny'> = {}): void {
    this.add({ mode: 'deny', ...options });
  }

  stall(options: RuleOptions<'stall'> = {}): void {
    this.add({ mode: 'stall', ...options });
  }

  drop(options: RuleOptions<'drop'> = {}): void {
    this.add({ mode: 'drop', ...options });
  }

  /** Token bucket: at most `perSecond` matching requests a second, bursts up to `burst` (default perSecond). */
  rateLimit(limit: RateLimit): void {
    const parsed = rateLimitSchema.parse(limit);
    const burst = parsed.burst ?? Math.max(1, Math.ceil(parsed.perSecond));
    this.bucket = { limit: { ...parsed, burst }, tokens: burst, refilledAt: performance.now() };
  }

  clearRateLimit(): void {
    this.bucket = undefined;
  }

  unreachable(mode: UnreachableMode = 'reset'): void {
    this.unreachableMode = mode;
    for (const listener of this.reachabilityListeners) listener(mode);
  }

  reachable(): void {
    if (this.unreachableMode === undefined) return;
    this.unreachableMode = undefined;
    for (const listener of this.reachabilityListeners) listener(undefined);
  }

  get unreachableAs(): UnreachableMode | undefined {
    return this.unreachableMode;
  }

  /** Called by the emulator when reachability changes (to close or reopen its listening socket). */
  onReachabilityChange(listener: (mode: UnreachableMode | undefined) => void): () => void {
    this.reachabilityListeners.add(listener);
    return () => this.reachabilityListeners.delete(listener);
  }

  /** Clears every rule, the rate limit and unreachability, and releases every stalled request. */
  reset(): void {
    this.rules = [];
    this.bucket = undefined;
    this.reachable();
    for (const release of [...this.stalled]) release();
    this.stalled.clear();
  }

  /** The active rules (with what is left of their counts) and the rate limit, for the control endpoint. */
  describe(): {
    rules: Array<FaultRule & { remaining?: number }>;
    rateLimit?: RateLimit;
    unreachable?: UnreachableMode;
    stalledRequests: number;
  } {
    return {
      rules: this.rules.map((r) => ({ ...r.rule, ...(r.remaining !== undefined ? { remaining: r.remaining } : {}) })),
      ...(this.bucket ? { rateLimit: this.bucket.limit } : {}),
      ...(this.unreachableMode ? { unreachable: this.unreachableMode } : {}),
      stalledRequests: this.stalled.size,
    };
  }

  /** Decides the fault (if any) for one request to `operation`, consuming counts and tokens. */
  decide(operation: string): FaultDecision | undefined {
    for (const active of this.rules) {
      const { rule } = active;
      if (rule.operations && !rule.operations.includes(operation)) continue;
      if (active.remaining !== undefined && active.remaining <= 0) continue;
      if (rule.fraction !== undefined && Math.random() >= rule.fraction) continue;
      if (active.remaining !== undefined) active.remaining -= 1;
      this.rules = this.rules.filter((r) => r.remaining === undefined || r.remaining > 0);
      return decisionFor(rule, operation);
    }
    if (this.bucket && (this.bucket.limit.operations ?? ['Sign', 'Verify']).includes(operation)) {
      const now = performance.now();
      const { limit } = this.bucket;
      this.bucket.tokens = Math.min(
        limit.burst!,
        this.bucket.tokens + ((now - this.bucket.refilledAt) / 1000) * limit.perSecond,
      );
      this.bucket.refilledAt = now;
      if (this.bucket.tokens < 1) return { kind: 'error', error: kmsErrors.throttling(), mode: 'rate_limit' };
      this.bucket.tokens -= 1;
    }
    return undefined;
  }

  /**
   * Holds a request for `ms` (forever when undefined) or until `reset()`, or until `abandoned` fires
   * (its client went away). Resolves true when released normally, false when abandoned.
   */
  hold(ms: number | undefined, abandoned: AbortSignal): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const finish = (released: boolean) => {
        if (timer) clearTimeout(timer);
        abandoned.removeEventListener('abort', onAbort);
        this.stalled.delete(release);
        resolve(released);
      };
      const release = () => finish(true);
      const onAbort = () => finish(false);
      const timer = ms === undefined ? undefined : setTimeout(release, ms);
      this.stalled.add(release);
      if (abandoned.aborted) onAbort();
      else abandoned.addEventListener('abort', onAbort, { once: true });
    });
  }
}

function decisionFor(rule: FaultRule, operation: string): FaultDecision {
  switch (rule.mode) {
    case 'throttle':
      return { kind: 'error', error: kmsErrors.throttling(), mode: 'throttle' };
    case 'fail':
      return {
        kind: 'error',
        error: rule.status === 503 ? kmsErrors.dependencyTimeout() : kmsErrors.internal(),
        mode: 'fail',
      };
    case 'deny':
      return { kind: 'error', error: kmsErrors.accessDenied(operation), mode: 'deny' };
    case 'stall':
      return { kind: 'stall', ms: rule.ms, phase: rule.phase ?? 'before' };
    case 'drop':
      return { kind: 'drop', phase: rule.phase ?? 'before' };
  }
}

/**
 * One KMS operation carried out within a deadline: each attempt gets its own timeout (an AbortSignal the
 * SDK honours, since the SDK sets none by default), failures are classified (./kms-error-class.ts), and
 * what may be retried is retried after an exponential backoff with full jitter (a random delay in
 * [0, min(cap, base × 2^attempt)), AWS's recommended shape), never past the deadline. The SDK's own retries are off
 * (maxAttempts 1) so that this is the only place that decides, counts and bounds them.
 *
 * Protects against: a stalled KMS holding a payment past the front's patience (every call ends by its
 * deadline: `backend_unavailable`), retry storms (backoff; throttling waits longer), and a non-idempotent
 * call (CreateKey) sent twice when the first may have been carried out: such a call is retried only after
 * a clean refusal (throttled, or never connected), never after a 5xx or a timeout.
 * A caller may also name a reason to stop (`refuse`, e.g. the key was destroyed meanwhile): asked just before
 * each attempt goes on the wire — after any wait for a slot and after each backoff — it ends the call with
 * its own fault and no request.
 * Known limits: the deadline bounds this call, not the time its abandoned request may still spend at KMS.
 */
import { SignerFault } from '../../signer-error.js';
import { classifyKmsError, type KmsErrorClass, type KmsFailureReason } from './kms-error-class.js';

export interface KmsRetryPolicy {
  /** Longest a single attempt may take before it is aborted (ms). */
  attemptTimeoutMs: number;
  /** Backoff base for server errors and timeouts, and for throttling (ms). */
  baseDelayMs: number;
  throttleBaseDelayMs: number;
  /** Largest backoff before jitter (ms). */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<KmsRetryPolicy> = Object.freeze({
  attemptTimeoutMs: 2000,
  baseDelayMs: 25,
  throttleBaseDelayMs: 100,
  maxDelayMs: 1000,
});

/** Counters of ../../metrics/signer-metrics.ts (`treasury_signer_kms_*`); labels are fixed enums. */
export interface KmsCallObserver {
  kmsRequest?(op: string, seconds: number, outcome: 'ok' | KmsFailureReason): void;
  kmsThrottle?(op: string): void;
  kmsRetry?(op: string, reason: KmsFailureReason): void;
  kmsFailure?(op: string, reason: KmsFailureReason | 'deadline' | 'maybe_executed' | 'circuit_open'): void;
}

/** A failed KMS call: the signer error code, plus the classified reason for callers that handle some themselves. */
export class KmsCallFault extends SignerFault {
  constructor(
    code: SignerFault['code'],
    message: string,
    readonly kms: KmsErrorClass,
  ) {
    super(code, message);
  }
}

export interface KmsCallOptions {
  /** Whether sending the request twice has the effect of sending it once (true for all but CreateKey). */
  idempotent: boolean;
  /** Absolute time (ms since the epoch) by which the call must be over. */
  deadline: number;
  policy: KmsRetryPolicy;
  observer?: KmsCallObserver;
  random?: () => number;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Wraps each attempt (e.g. a bound on requests in flight); the time spent waiting counts against the deadline only. */
  slot?: <R>(deadline: number, attempt: () => Promise<R>) => Promise<R>;
  /** Asked just before each attempt goes on the wire: a fault ends the call with it, sending nothing. */
  refuse?: () => SignerFault | undefined;
}

export interface KmsSendOptions {
  /** Absolute time (ms since the epoch); the configured deadline from now when left out. */
  deadline?: number;
  /** Ask KMS even while the breaker holds calls back (the health check). */
  probe?: boolean;
  refuse?: KmsCallOptions['refuse'];
}

/** The backend's own `send`: one operation through its breaker, its request slots and this retry loop. */
export type KmsSend = <T>(
  op: string,
  idempotent: boolean,
  attempt: (signal: AbortSignal) => Promise<T>,
  options?: KmsSendOptions,
) => Promise<T>;

const UNAVAILABLE: ReadonlySet<KmsFailureReason> = new Set([
  'throttled',
  'server_error',
  'timeout',
  'connection_lost',
  'unreachable',
]);

function faultFor(op: string, c: KmsErrorClass, err: unknown): KmsCallFault {
  const name = err instanceof Error ? err.name : 'error';
  switch (c.reason) {
    case 'not_found':
      return new KmsCallFault('key_not_found', `KMS ${op}: no such key`, c);
    case 'disabled':
    case 'invalid_state':
      return new KmsCallFault('key_destroyed', `KMS ${op}: the key is disabled or pending deletion`, c);
    default:
      if (UNAVAILABLE.has(c.reason))
        return new KmsCallFault('backend_unavailable', `KMS ${op}: ${c.reason} (${name})`, c);
      return new KmsCallFault('hsm_error', `KMS ${op} failed: ${c.reason} (${name})`, c);
  }
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `send` (one attempt, given the signal that aborts it) until it succeeds, must not be retried, or the deadline comes. */
export async function runKmsCall<T>(
  op: string,
  send: (signal: AbortSignal) => Promise<T>,
  options: KmsCallOptions,
): Promise<T> {
  const { policy, observer } = options;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  /** The caller's own refusal, told apart from a slot's deadline (it is not a KMS failure: not counted as one). */
  let refused: SignerFault | undefined;
  for (let attempt = 0; ; attempt++) {
    const remaining = options.deadline - now();
    if (remaining <= 0) {
      observer?.kmsFailure?.(op, 'deadline');
      throw new KmsCallFault('backend_unavailable', `KMS ${op}: deadline passed`, {
        reason: 'timeout',
        retryable: false,
        maybeExecuted: attempt > 0,
      });
    }
    let started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const attemptOnce = () => {
      // The attempt's clock starts when it may go on the wire, not while it waited for a slot.
      started = process.hrtime.bigint();
      refused = options.refuse?.();
      if (refused) return Promise.reject(refused);
      const left = options.deadline - now();
      if (left <= 0)
        return Promise.reject(
          Object.assign(new Error('deadline passed waiting for a request slot'), { name: 'AbortError' }),
        );
      return send(AbortSignal.timeout(Math.max(1, Math.min(left, policy.attemptTimeoutMs))));
    };
    let failure: unknown;
    try {
      const result = await (options.slot ? options.slot(options.deadline, attemptOnce) : attemptOnce());
      observer?.kmsRequest?.(op, seconds(), 'ok');
      return result;
    } catch (err) {
      if (err === refused) throw err;
      if (err instanceof SignerFault) {
        observer?.kmsFailure?.(op, 'deadline');
        throw err;
      }
      failure = err;
    }
    const c = classifyKmsError(failure);
    observer?.kmsRequest?.(op, seconds(), c.reason);
    if (c.reason === 'throttled') observer?.kmsThrottle?.(op);
    if (!c.retryable) {
      observer?.kmsFailure?.(op, c.reason);
      throw faultFor(op, c, failure);
    }
    if (c.maybeExecuted && !options.idempotent) {
      observer?.kmsFailure?.(op, 'maybe_executed');
      throw new KmsCallFault(
        'backend_unavailable',
        `KMS ${op}: ${c.reason}; the request may have been carried out, so it is not sent again`,
        c,
      );
    }
    const base = c.reason === 'throttled' ? policy.throttleBaseDelayMs : policy.baseDelayMs;
    const delay = Math.floor(random() * Math.min(policy.maxDelayMs, base * 2 ** attempt));
    if (now() + delay >= options.deadline) {
      observer?.kmsFailure?.(op, 'deadline');
      throw new KmsCallFault(
        'backend_unavailable',
        `KMS ${op}: ${c.reason}, and no time is left to retry before the deadline`,
        c,
      );
    }
    observer?.kmsRetry?.(op, c.reason);
    await sleep(delay);
  }
}

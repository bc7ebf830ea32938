/**
 * Rate limits (docs/security-model.md, Rate limits), counted by rate-limiter-flexible in fixed windows of
 * TREASURY_RATE_LIMIT_WINDOW_SECONDS. Five buckets:
 *   nonce         POST /v1/identity/nonce, per client address (./client-address.ts);
 *   init          POST /v1/identity/init (an account and an HSM key per new signer), per client address;
 *   token         every authenticated route but the wallet pay routes, per bearer token;
 *   pay           the wallet pay routes (policy, evaluate, pay, transfer, settlement), per bearer token;
 *   auth_failure  bearers refused with 401 (unknown, expired, revoked, malformed), per client address: an
 *                 address past it gets 429 for any bearer until its window ends, before any lookup.
 * nonce, init and token are counted in PostgreSQL (table rate_limits, created by a migration), so every API
 * process shares one count; each process also remembers a key found over its limit until its window ends
 * and answers it from memory, and counts in memory alone while PostgreSQL does not answer (the insurance
 * limiter), so an outage neither blocks every request nor lifts the limits. pay is counted in each
 * process's memory only (auth_failure too: its check runs on every request that carries a bearer):
 * a PostgreSQL round trip on every payment would cost the pay path its throughput,
 * so N processes allow N times the pay limit (the wallet's policy and the PAT's daily cap still bound the
 * money; this bounds the load).
 * A refused request answers 429 `rate_limited` with Retry-After and `retry_after_seconds`, and counts in
 * treasury_rate_limited_total{bucket}. The operator token is not limited.
 *
 * Does not defend: floods spread over many addresses or /64s; clients behind one NAT share their
 * auth_failure count, so one of them guessing tokens holds the others back for a window.
 */
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Authenticator } from '../../auth/authenticator.js';
import type { RateLimitConfig } from '../../config/app-config.js';
import { AppError } from '../../errors/app-error.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import { clientAddressOf, type TrustedProxy } from './client-address.js';

export type RateLimitBucket = 'nonce' | 'init' | 'token' | 'pay' | 'auth_failure';

/** The table of migrations/20261125200500_rate_limits.ts (the library's layout: key, points, expire). */
const TABLE = 'rate_limits';

export class RateLimits {
  private readonly limiters: Readonly<Record<RateLimitBucket, RateLimiterAbstract>> | undefined;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly knex: Knex,
    private readonly metrics: TreasuryMetrics,
  ) {
    if (!config.enabled) return;
    const duration = config.windowSeconds;
    const shared = (bucket: RateLimitBucket, points: number) =>
      new RateLimiterPostgres({
        storeClient: knex,
        storeType: 'knex',
        tableName: TABLE,
        tableCreated: true,
        // Rows expired an hour ago are deleted by `clearExpired`, on a timer the app owns and stops at shutdown.
        clearExpiredByTimeout: false,
        keyPrefix: bucket,
        points,
        duration,
        inMemoryBlockOnConsumed: points + 1,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix: bucket, points, duration }),
      });
    this.limiters = Object.freeze({
      nonce: shared('nonce', config.nonce),
      init: shared('init', config.init),
      token: shared('token', config.token),
      pay: new RateLimiterMemory({ keyPrefix: 'pay', points: config.pay, duration }),
      auth_failure: new RateLimiterMemory({ keyPrefix: 'auth_failure', points: config.auth_failure, duration }),
    });
  }

  get enabled(): boolean {
    return this.limiters !== undefined;
  }

  /** Deletes the shared table's rows expired over an hour ago (the app's `rate_limit_cleanup` task, every 5 minutes). */
  async clearExpired(): Promise<void> {
    if (!this.limiters) return;
    await this.knex(TABLE)
      .where('expire', '<', Date.now() - 3_600_000)
      .del();
  }

  /** Counts one request of `key` in `bucket`; throws 429 `rate_limited` when over the limit. */
  async consume(bucket: RateLimitBucket, key: string): Promise<void> {
    if (!this.limiters) return;
    try {
      await this.limiters[bucket].consume(key);
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      throw this.refusal(bucket, res.msBeforeNext);
    }
  }

  /** When this process last counted a refused bearer (ms): none within a window, nobody can be over it. */
  private lastAuthFailureAt = Number.NEGATIVE_INFINITY;

  /** Whether any address may have spent its refused bearers: false unless one was counted within a window. */
  get authFailuresRecent(): boolean {
    return Date.now() - this.lastAuthFailureAt < this.config.windowSeconds * 1000;
  }

  /** Counts one refused bearer from `address`; never throws (the 401 stands for this request). */
  async countAuthFailure(address: string): Promise<void> {
    this.lastAuthFailureAt = Date.now();
    await this.consume('auth_failure', address).catch(() => undefined);
  }

  /** Throws 429 when `key` has used up `bucket` in this window, without counting (in-memory buckets). */
  async refuseIfSpent(bucket: 'auth_failure', key: string): Promise<void> {
    if (!this.limiters) return;
    const res = await this.limiters[bucket].get(key);
    if (res && res.remainingPoints <= 0) throw this.refusal(bucket, res.msBeforeNext);
  }

  private refusal(bucket: RateLimitBucket, msBeforeNext: number): AppError {
    this.metrics.rateLimited.inc({ bucket });
    const retryAfter = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return new AppError('rate_limited', {
      headers: { 'Retry-After': String(retryAfter) },
      recovery: { kind: 'retry_later', retry_after_seconds: retryAfter },
      fields: {
        bucket,
        retry_after_seconds: retryAfter,
        limit: this.config[bucket],
        window_seconds: this.config.windowSeconds,
      },
    });
  }
}

/** The 401s that count against an address: a bearer that is missing, malformed, unknown, expired or revoked. */
const REFUSED_BEARER = new Set(['unauthorized', 'invalid_token', 'master_key_removed']);

/** The unauthenticated routes limited per client address, by path as the router matches it. */
const ADDRESS_BUCKETS = new Map<string, RateLimitBucket>([
  ['/v1/identity/nonce', 'nonce'],
  ['/v1/identity/init', 'init'],
]);

/**
 * Counts the sign-in routes per client address, before the body is read. The router matches paths
 * case-insensitively and with a trailing slash, so the lookup does too.
 */
export function rateLimitByAddress(limits: RateLimits, trustedProxies: readonly TrustedProxy[]): Middleware {
  return async (ctx, next) => {
    if (!limits.enabled) return next();
    if (ctx.method === 'POST') {
      const bucket = ADDRESS_BUCKETS.get(ctx.path.toLowerCase().replace(/\/+$/, ''));
      if (bucket) await limits.consume(bucket, clientAddressOf(ctx, trustedProxies));
    }
    if (ctx.get('authorization') === '') return next();
    // A bearer: refused at once from an address that spent its refused bearers, counted when refused now.
    // With no refused bearer counted within a window (the usual case) the address is not even worked out.
    if (limits.authFailuresRecent) await limits.refuseIfSpent('auth_failure', clientAddressOf(ctx, trustedProxies));
    try {
      return await next();
    } catch (err) {
      if (err instanceof AppError && REFUSED_BEARER.has(err.code))
        await limits.countAuthFailure(clientAddressOf(ctx, trustedProxies));
      throw err;
    }
  };
}

/**
 * The authenticator as the routes of one bucket see it: each successful authentication of a token is
 * counted in `bucket` under the token's id (never the token itself). Everything else is the authenticator's
 * own, bound to it.
 */
export function rateLimitedAuthenticator(
  auth: Authenticator,
  limits: RateLimits,
  bucket: 'token' | 'pay',
): Authenticator {
  if (!limits.enabled) return auth;
  const authenticate: Authenticator['authenticate'] = async (...args) => {
    const principal = await auth.authenticate(...args);
    if (principal.kind === 'token') await limits.consume(bucket, principal.tokenId);
    return principal;
  };
  return new Proxy(auth, {
    get(target, prop) {
      if (prop === 'authenticate') return authenticate;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

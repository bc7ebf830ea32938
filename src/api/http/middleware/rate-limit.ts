/**
 * Rate limits (docs/security-model.md, Rate limits), counted by rate-limiter-flexible in fixed windows of
 * TREASURY_RATE_LIMIT_WINDOW_SECONDS. Eleven buckets:
 *   nonce         POST /v1/identity/nonce, per client address (./client-address.ts);
 *   init          POST /v1/identity/init (an account and an HSM key per new signer), per client address;
 *   token         every authenticated route but the wallet pay routes, per bearer token;
 *   account       the same routes, per tenant (the bearer's platform account, else its scope: a Treasury account
 *                 of no platform account): a tenant minting more PATs does not multiply its share. The owner's
 *                 signed-in sessions are not counted in it (each keeps its `token` budget), so that a leaked PAT
 *                 spending the account's budget never locks the owner out of revoking it;
 *   pay           the wallet pay routes (policy, evaluate, pay, transfer, settlement), per bearer token;
 *   pay_account   those of them outside the pay admission (policy read, evaluate, settlement report: pay and
 *                 transfer take their tenant's places in src/api/pay/pay-admission.ts instead), per tenant
 *                 (src/api/auth/wallet-tenant.ts), so that a tenant minting more PATs or agents does not multiply
 *                 its share of the database reads and RPC reads behind them;
 *   policy        the wallet policy writes (PUT /v1/wallets/{id}/policy and …/policy/signed), on top of pay, per
 *                 account (src/api/auth/wallet-tenant.ts: the bearer's platform account, else its Treasury
 *                 account), so minting more tokens or agents does not multiply it: each write appends an audit
 *                 row nobody may delete, about 130 KB with a policy at its bounds;
 *   receipt       the signer's policy receipts (GET /v1/wallets/{id}/policy/receipt), on top of token, per account
 *                 (keyed as policy): each is one HSM/KMS signature, in the signer's queue and the KMS sign rate
 *                 every tenant's payments share, so many wallets and PATs of one account do not multiply it;
 *   discovery     the public catalogue (GET /discovery/resources, /discovery/search), per client address, in
 *                 each process's memory: a shared count would cost every public read a PostgreSQL write,
 *                 more than the (cached) answer it guards;
 *   auth_failure  bearers refused with 401 (unknown, expired, revoked, malformed), per client address: past
 *                 it, a bearer from that address that is refused answers 429 instead of 401 until the window
 *                 ends — it is still looked up, so a valid bearer from the same address (a NAT shared by many
 *                 agents) still passes;
 *   auth_failure_token  refusals of one presented bearer (keyed by its SHA-256, never the bearer), from any
 *                 address: past it, that bearer answers 429 before any lookup. A valid bearer is never counted,
 *                 so never refused; keyed by the whole bearer, not a prefix, so nobody can spend another's count.
 * nonce, init, token, account, policy and receipt are counted in PostgreSQL (table rate_limits, created by a migration), so every
 * API process shares one count; each process also remembers a key found over its limit until its window ends
 * and answers it from memory, and counts in memory alone while PostgreSQL does not answer (the insurance
 * limiter), so an outage neither blocks every request nor lifts the limits. pay and pay_account are counted in each
 * process's memory only (the auth_failure buckets too: their check runs on every request that carries a bearer):
 * a PostgreSQL round trip on every payment would cost the pay path its throughput,
 * so N processes allow N times the pay limit (the wallet's policy and the PAT's daily cap still bound the
 * money; this bounds the load).
 * A refused request answers 429 `rate_limited` with Retry-After and `retry_after_seconds`, and counts in
 * treasury_rate_limited_total{bucket}. The operator token is not limited.
 *
 * Does not defend: floods spread over many addresses or /64s; distinct made-up bearers each cost one lookup by
 * hash (an indexed read) — the throttle answers them 429 but does not spare that read, since refusing
 * unlooked-up bearers would refuse valid ones too; clients behind one NAT share their auth_failure count, so
 * once one of them spent it, the others' refused bearers (not their valid ones) answer 429 for the window.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Middleware } from 'koa';
import {
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Authenticator } from '../../auth/authenticator.js';
import { walletTenant } from '../../auth/wallet-tenant.js';
import type { RateLimitConfig } from '../../config/app-config.js';
import { AppError } from '../../errors/app-error.js';
import type { TreasuryMetrics } from '../../metrics/treasury-metrics.js';
import { BoundedWindowCounter } from './bounded-window-counter.js';
import { clientAddressOf, type TrustedProxy } from './client-address.js';
import { isCrossSiteSubresource } from './cross-site-request.js';

export type RateLimitBucket =
  | 'nonce'
  | 'init'
  | 'token'
  | 'account'
  | 'pay'
  | 'pay_account'
  | 'policy'
  | 'receipt'
  | 'discovery'
  | 'auth_failure'
  | 'auth_failure_token';

/** The buckets rate-limiter-flexible counts (auth_failure_token has its own bounded counter). */
type CountedBucket = Exclude<RateLimitBucket, 'auth_failure_token'>;

/** Presented bearers whose refusals are remembered at once, per process (the oldest window is forgotten first). */
const MAX_COUNTED_BEARERS = 100_000;

/** The table of migrations/20261125200500_rate_limits.ts (the library's layout: key, points, expire). */
const TABLE = 'rate_limits';

export class RateLimits {
  private readonly limiters: Readonly<Record<CountedBucket, RateLimiterAbstract>> | undefined;
  private readonly refusedBearers: BoundedWindowCounter;

  constructor(
    private readonly config: RateLimitConfig,
    private readonly knex: Knex,
    private readonly metrics: TreasuryMetrics,
  ) {
    this.refusedBearers = new BoundedWindowCounter(config.windowSeconds * 1000, MAX_COUNTED_BEARERS);
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
      account: shared('account', config.account),
      pay: new RateLimiterMemory({ keyPrefix: 'pay', points: config.pay, duration }),
      pay_account: new RateLimiterMemory({ keyPrefix: 'pay_account', points: config.pay_account, duration }),
      // Shared: a policy write is a PostgreSQL transaction and an audit row already, and N processes must not
      // allow N times the rows.
      policy: shared('policy', config.policy),
      // Shared as policy: N processes must not allow N times the signatures.
      receipt: shared('receipt', config.receipt),
      discovery: new RateLimiterMemory({ keyPrefix: 'discovery', points: config.discovery, duration }),
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
  async consume(bucket: CountedBucket, key: string): Promise<void> {
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

  /** Throws 429 (bucket auth_failure_token) when the presented bearer spent its refusals in this window. */
  refuseSpentBearer(bearer: string): void {
    if (!this.limiters) return;
    const { count, msBeforeReset } = this.refusedBearers.peek(bearerKey(bearer));
    if (count >= this.config.auth_failure_token) throw this.refusal('auth_failure_token', msBeforeReset);
  }

  /**
   * Counts a refused bearer against its address and itself, and says how to answer it: `refused` (the
   * authenticator's 401) while the address has refusals left, a 429 (bucket auth_failure) once it has not.
   */
  async countRefusedBearer(bearer: string, address: string, refused: AppError): Promise<AppError> {
    if (!this.limiters) return refused;
    this.lastAuthFailureAt = Date.now();
    this.refusedBearers.hit(bearerKey(bearer));
    try {
      await this.limiters.auth_failure.consume(address);
      return refused;
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) return refused;
      return this.refusal('auth_failure', res.msBeforeNext);
    }
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

/** The unauthenticated routes limited per client address, by method and path as the router matches it. */
const ADDRESS_BUCKETS = new Map<string, 'nonce' | 'init' | 'discovery'>([
  ['POST /v1/identity/nonce', 'nonce'],
  ['POST /v1/identity/init', 'init'],
  ['GET /discovery/resources', 'discovery'],
  ['GET /discovery/search', 'discovery'],
]);

/** The key a presented bearer is counted under: a SHA-256 of the header, never the bearer itself. */
function bearerKey(bearer: string): string {
  return createHash('sha256').update(bearer, 'utf8').digest('hex').slice(0, 32);
}

/**
 * Counts the sign-in routes and the public catalogue per client address, before the body is read; a browser's
 * cross-site request to them is refused (403 `cross_site_request`) uncounted (./cross-site-request.ts). The router matches paths
 * case-insensitively and with a trailing slash, so the lookup does too. A request with a bearer is refused
 * before any lookup when that bearer spent its refusals; its refusal is counted against the bearer and the
 * address, and answered 429 once the address spent its own.
 */
export function rateLimitByAddress(limits: RateLimits, trustedProxies: readonly TrustedProxy[]): Middleware {
  return async (ctx, next) => {
    if (!limits.enabled) return next();
    // HEAD is served by the GET routes, so it counts as GET.
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    const bucket = ADDRESS_BUCKETS.get(`${method} ${ctx.path.toLowerCase().replace(/\/+$/, '')}`);
    if (bucket) {
      // Refused before it is counted: another site's page must not spend the owner's address's allowance.
      if (isCrossSiteSubresource(ctx)) throw new AppError('cross_site_request', { fields: { bucket } });
      await limits.consume(bucket, clientAddressOf(ctx, trustedProxies));
    }
    const bearer = ctx.get('authorization');
    if (bearer === '') return next();
    // With no refused bearer counted within a window (the usual case) the bearer is not even hashed.
    if (limits.authFailuresRecent) limits.refuseSpentBearer(bearer);
    try {
      return await next();
    } catch (err) {
      if (err instanceof AppError && REFUSED_BEARER.has(err.code))
        throw await limits.countRefusedBearer(bearer, clientAddressOf(ctx, trustedProxies), err);
      throw err;
    }
  };
}

/**
 * The authenticator as the routes of one bucket see it: each successful authentication of a token is
 * counted in `bucket` under the token's id (never the token itself), and on the `token` routes in `account` under
 * its tenant too. Everything else is the authenticator's
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
    if (principal.kind !== 'token') return principal;
    await limits.consume(bucket, principal.tokenId);
    // The pay routes' share per tenant is their admission's (src/api/pay/pay-admission.ts). The owner's own signed-in
    // sessions are not counted in `account`: what its PATs and agents spend must never lock it out of revoking them.
    if (bucket === 'token' && principal.sessionOrigin !== 'sign_in')
      await limits.consume('account', walletTenant(principal, `${principal.scopeType}:${principal.scopeId}`));
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

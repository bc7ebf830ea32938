/**
 * The rate-limit settings of treasury-api (docs/security-model.md, Rate limits): their environment variables,
 * part of the API's one configuration schema (./app-config.ts spreads them in, in this order), and the frozen
 * `RateLimitConfig` src/api/http/middleware/rate-limit.ts counts with. Requests allowed per window of
 * TREASURY_RATE_LIMIT_WINDOW_SECONDS: NONCE and INIT per client address, TOKEN per bearer on every
 * authenticated route but the pay routes, and ACCOUNT per tenant on the same routes (the bearer's platform account,
 * else its scope: minting more PATs does not multiply a tenant's share), all counted in PostgreSQL and shared by
 * every API process; PAY per
 * bearer on the wallet pay routes, PAY_ACCOUNT per tenant on those of them outside the pay admission (policy read,
 * evaluate, settlement report) and DISCOVERY per client address on the public catalogue (GET /discovery/*),
 * counted in each process's memory; POLICY per account on the wallet policy writes (PUT …/policy and
 * …/policy/signed: each writes a permanent audit row), counted in PostgreSQL; RECEIPT per account on the signer's
 * policy receipts (GET …/policy/receipt: each one HSM/KMS signature, in the signer's queue every tenant shares),
 * counted in PostgreSQL. `off` is for benchmarks only.
 *
 * Defends: a limit outside its bounds (each variable is a bounded integer). Does not defend: the counting
 * (the middleware does).
 */
import { z } from 'zod';
import { envInt } from '../../shared/env-int.js';

export const rateLimitEnvShape = {
  TREASURY_RATE_LIMITS: z.enum(['on', 'off']).default('on'),
  TREASURY_RATE_LIMIT_WINDOW_SECONDS: envInt(1, 3600, 60),
  TREASURY_RATE_LIMIT_NONCE: envInt(1, 10_000_000, 30),
  TREASURY_RATE_LIMIT_INIT: envInt(1, 10_000_000, 10),
  TREASURY_RATE_LIMIT_TOKEN: envInt(1, 10_000_000, 1200),
  /**
   * Calls per tenant per window on the routes TOKEN counts (over all the tenant's bearers: its sessions, PATs and
   * agents' PATs), shared through PostgreSQL.
   */
  TREASURY_RATE_LIMIT_ACCOUNT: envInt(1, 10_000_000, 6000),
  TREASURY_RATE_LIMIT_PAY: envInt(1, 10_000_000, 100_000),
  /**
   * Calls per tenant per window on the pay routes outside the pay admission (a wallet's policy read, its dry-run
   * evaluation, a settlement report), over all the tenant's bearers, in each process's memory: PAY counts each
   * bearer, so without it a tenant's share grew with every PAT it minted.
   */
  TREASURY_RATE_LIMIT_PAY_ACCOUNT: envInt(1, 10_000_000, 100_000),
  TREASURY_RATE_LIMIT_DISCOVERY: envInt(1, 10_000_000, 120),
  /**
   * Wallet policy writes per account per window (the bearer's platform account, else its Treasury account),
   * shared through PostgreSQL: each one appends an audit row nobody may delete.
   */
  TREASURY_RATE_LIMIT_POLICY: envInt(1, 10_000_000, 60),
  /**
   * The signer's policy receipts per account per window (keyed as POLICY), shared through PostgreSQL: each one is
   * an HSM/KMS signature taken from the sign rate every tenant's payments share.
   */
  TREASURY_RATE_LIMIT_RECEIPT: envInt(1, 10_000_000, 60),
  /**
   * Refused bearers (401) per client address per window, in each process's memory; past it, a bearer from there
   * that is refused answers 429 (a valid one still passes).
   */
  TREASURY_RATE_LIMIT_AUTH_FAILURES: envInt(1, 10_000_000, 60),
  /** Refusals of one presented bearer per window, in each process's memory; past it that bearer is 429 before any lookup. */
  TREASURY_RATE_LIMIT_AUTH_FAILURES_PER_TOKEN: envInt(1, 10_000_000, 10),
};

type RateLimitEnv = { [K in keyof typeof rateLimitEnvShape]: z.infer<(typeof rateLimitEnvShape)[K]> };

export type RateLimitConfig = Readonly<{
  enabled: boolean;
  windowSeconds: number;
  /** Requests per window: nonce, init and discovery per client address, token and pay per bearer. */
  nonce: number;
  init: number;
  token: number;
  /** The `token` routes' calls per tenant (the bearer's platform account, else its scope). */
  account: number;
  pay: number;
  /** The pay routes outside the pay admission: calls per tenant (the bearer's platform account, else its Treasury account). */
  pay_account: number;
  discovery: number;
  /** Wallet policy writes per account (the bearer's platform account, else its Treasury account). */
  policy: number;
  /** The signer's policy receipts per account (keyed as `policy`). */
  receipt: number;
  /** Refused bearers per client address. */
  auth_failure: number;
  /** Refusals of one presented bearer (keyed by its hash). */
  auth_failure_token: number;
}>;

export function rateLimitConfigOf(e: RateLimitEnv): RateLimitConfig {
  return Object.freeze({
    enabled: e.TREASURY_RATE_LIMITS === 'on',
    windowSeconds: e.TREASURY_RATE_LIMIT_WINDOW_SECONDS,
    nonce: e.TREASURY_RATE_LIMIT_NONCE,
    init: e.TREASURY_RATE_LIMIT_INIT,
    token: e.TREASURY_RATE_LIMIT_TOKEN,
    account: e.TREASURY_RATE_LIMIT_ACCOUNT,
    pay: e.TREASURY_RATE_LIMIT_PAY,
    pay_account: e.TREASURY_RATE_LIMIT_PAY_ACCOUNT,
    discovery: e.TREASURY_RATE_LIMIT_DISCOVERY,
    policy: e.TREASURY_RATE_LIMIT_POLICY,
    receipt: e.TREASURY_RATE_LIMIT_RECEIPT,
    auth_failure: e.TREASURY_RATE_LIMIT_AUTH_FAILURES,
    auth_failure_token: e.TREASURY_RATE_LIMIT_AUTH_FAILURES_PER_TOKEN,
  });
}

/**
 * Configuration of treasury-signer, parsed once from the environment with zod into a frozen object.
 *
 * Protects against: a signer started half-configured — no socket, no PIN, two PINs, an unknown backend,
 * an empty or malformed token allow-list, or absurd bounds refuse to start with a message naming the
 * variable; a PIN file that other users can read is refused. Unset, the token allow-list names testnet tokens
 * only: a mainnet token is signed for only when TREASURY_SIGNER_ALLOWED_TOKENS names it (./allowed-tokens.ts).
 * The signer's amount and rate limits are read here and nowhere else: only the signer's own environment sets them, never a request. The PIN is read here and handed to the backend only: it is a non-enumerable property, so
 * logging or serialising the config cannot print it, and it never appears in an error message.
 * With TREASURY_KEY_BACKEND=aws-kms no PIN is read and no AWS credential either: the SDK's default
 * provider chain finds them (a TREASURY_KMS_*_KEY variable is refused, so none creeps into Treasury's files).
 * In production mode (`NODE_ENV` or `TREASURY_ENV` = `production`) a PIN from the environment, a PIN under 8
 * characters, a policy store without a watermark file, a plain-HTTP KMS endpoint and an unset
 * TREASURY_SIGNER_ALLOWED_TOKENS are refused too, all listed in
 * one error (./signer-production-mode.ts).
 * Known limits: SOFTHSM2_CONF is read by the SoftHSM library itself from the environment, not here; AWS_*
 * variables are read by the AWS SDK.
 */
import fs from 'node:fs';
import { z } from 'zod';
import type { WalletLimit } from '../limits/wallet-limiter.js';
import { parseAllowedTokens, type AllowedToken } from './allowed-tokens.js';
import {
  awsKmsEnvShape,
  parseAwsKmsBackend,
  refuseCredentialVariables,
  type AwsKmsBackendConfig,
} from './aws-kms-config.js';
import { LIBUV_DEFAULT_THREADS, LIBUV_MAX_THREADS } from './hsm-threads.js';
import { ownerPolicyEnvShape, parseOwnerPolicyConfig, type OwnerPolicyConfig } from './owner-policy-config.js';
import { SignerConfigError } from './signer-config-error.js';
import { isProductionMode, signerProductionProblems } from './signer-production-mode.js';
import { solanaInvariants, type SolanaInvariants } from './solana-invariants.js';

export type { AllowedToken } from './allowed-tokens.js';
export type { AwsKmsBackendConfig } from './aws-kms-config.js';
export { SignerConfigError } from './signer-config-error.js';

/** Permit2's canonical address (the same on every EVM chain). */
const DEFAULT_PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';
/** The x402 `upto` Permit2 proxy (x402UptoPermit2Proxy), the only spender the default configuration allows. */
const DEFAULT_PERMIT2_SPENDERS = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002';
const addressListSchema = z
  .string()
  .regex(/^\s*0x[0-9a-fA-F]{40}\s*(,\s*0x[0-9a-fA-F]{40}\s*)*$/, 'expected a comma-separated list of 0x addresses');

/**
 * The signer's own amount and rate limits (raw 6-decimal units; USDC). Low on purpose: an x402 payment is
 * typically cents to a few dollars, so 100 USDC in one signature is already far above what an agent
 * pays per call, and bounds what any single signature a compromised front obtains can move. Per wallet
 * address, 250 USDC an hour and 1,000 a day bound what a wallet can lose before an operator notices (the
 * front's policies are usually tighter; these are the floor of trust when the front is not). 120
 * signatures a minute (2/s bursts) and 3,600 an hour (1/s sustained) per wallet cover an agent paying
 * per call in a loop. Operators with bigger payments raise them in the signer's environment.
 * Policy receipts have ceilings of their own, 20 a minute and 200 an hour per wallet: an owner checks a wallet's
 * policy now and then, and a reader of the wallet asking for more never takes what its payments need.
 */
const DEFAULT_MAX_PER_SIGNATURE = '100000000';
const DEFAULT_WALLET_MAX_PER_HOUR = '250000000';
const DEFAULT_WALLET_MAX_PER_DAY = '1000000000';
const DEFAULT_WALLET_SIGNATURES_PER_MINUTE = 120;
const DEFAULT_WALLET_SIGNATURES_PER_HOUR = 3600;
const DEFAULT_WALLET_RECEIPTS_PER_MINUTE = 20;
const DEFAULT_WALLET_RECEIPTS_PER_HOUR = 200;
/** Positive raw amounts below 10^18 (under 2^63: the limiter's sums are exact 64-bit integers). */
const rawAmountSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,17}$/, 'expected a positive integer below 10^18 (raw 6-decimal units)');

const envSchema = z.object({
  TREASURY_SIGNER_SOCKET: z.string().min(1).max(107, 'unix socket paths are limited to 107 bytes'),
  /** 0600: only the signer's user may connect; 0660: also its group (the API's user, when it runs as another user). */
  TREASURY_SIGNER_SOCKET_MODE: z.enum(['0600', '0660']).default('0600'),
  /** The key backend; TREASURY_SIGNER_BACKEND is its older name, still read. */
  TREASURY_KEY_BACKEND: z.enum(['pkcs11', 'aws-kms']).optional(),
  TREASURY_SIGNER_BACKEND: z.enum(['pkcs11', 'aws-kms']).optional(),
  ...awsKmsEnvShape,
  ...ownerPolicyEnvShape,
  TREASURY_PKCS11_MODULE: z.string().min(1).default('/usr/lib/softhsm/libsofthsm2.so'),
  TREASURY_PKCS11_TOKEN_LABEL: z.string().min(1).max(32).default('treasury'),
  /** The token's serial number, when more than one token carries the label (docs/deploy-hsm.md). */
  TREASURY_PKCS11_TOKEN_SERIAL: z.string().trim().min(1).max(16).optional(),
  TREASURY_PKCS11_PIN: z.string().min(4).max(256).optional(),
  TREASURY_PKCS11_PIN_FILE: z.string().min(1).optional(),
  TREASURY_PKCS11_KEK_LABEL: z.string().min(1).max(64).default('treasury-root-kek'),
  TREASURY_PKCS11_SESSIONS: z.coerce.number().int().min(1).max(64).default(4),
  /** Node's own variable, read by libuv when the process starts: the threads a PKCS#11 C_Sign runs on (./hsm-threads.ts). */
  UV_THREADPOOL_SIZE: z.coerce.number().int().min(1).max(LIBUV_MAX_THREADS).default(LIBUV_DEFAULT_THREADS),
  TREASURY_PKCS11_SIGN_INLINE: z.enum(['when_alone', 'never']).default('when_alone'),
  TREASURY_SIGNER_KEY_CACHE_SIZE: z.coerce.number().int().min(0).max(100_000).default(10_000),
  TREASURY_SIGNER_KEY_CACHE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /** Unset: testnet tokens only (./allowed-tokens.ts); production mode requires it. */
  TREASURY_SIGNER_ALLOWED_TOKENS: z.string().optional(),
  TREASURY_SIGNER_PERMIT2_ADDRESS: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x address')
    .default(DEFAULT_PERMIT2)
    .transform((v) => v.toLowerCase()),
  TREASURY_SIGNER_PERMIT2_SPENDERS: addressListSchema
    .default(DEFAULT_PERMIT2_SPENDERS)
    .transform((v) => v.split(',').map((a) => a.trim().toLowerCase())),
  TREASURY_SIGNER_MAX_PER_SIGNATURE: rawAmountSchema.optional(),
  /** The older name of TREASURY_SIGNER_MAX_PER_SIGNATURE, still read. */
  TREASURY_SIGNER_MAX_VALUE: rawAmountSchema.optional(),
  TREASURY_SIGNER_WALLET_MAX_PER_HOUR: rawAmountSchema.default(DEFAULT_WALLET_MAX_PER_HOUR),
  TREASURY_SIGNER_WALLET_MAX_PER_DAY: rawAmountSchema.default(DEFAULT_WALLET_MAX_PER_DAY),
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .default(DEFAULT_WALLET_SIGNATURES_PER_MINUTE),
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .default(DEFAULT_WALLET_SIGNATURES_PER_HOUR),
  /** Policy receipts (`attest_wallet_policy`) per wallet: ceilings of their own, apart from the payments'. */
  TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(DEFAULT_WALLET_RECEIPTS_PER_MINUTE),
  TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(DEFAULT_WALLET_RECEIPTS_PER_HOUR),
  /** Where the per-wallet windows are kept across restarts (../limits/limits-state-file.ts); unset: memory only. */
  TREASURY_SIGNER_LIMITS_STATE_FILE: z.string().min(1).max(4096).optional(),
  TREASURY_SIGNER_MAX_VALIDITY_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(31 * 86_400)
    .default(86_400),
  TREASURY_SIGNER_METRICS_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  TREASURY_SIGNER_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  TREASURY_SIGNER_MAX_QUEUE: z.coerce.number().int().min(1).max(100_000).default(1024),
  TREASURY_SIGNER_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TREASURY_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
});

/** The signer's environment schema: docs/configuration.md is generated from it (ops/docs/configuration-reference.ts). */
export { envSchema as signerEnvSchema };

export interface Pkcs11BackendConfig {
  kind: 'pkcs11';
  modulePath: string;
  tokenLabel: string;
  /** Picks among tokens that share the label; unset: the label must be unique. */
  tokenSerial?: string | undefined;
  /** Non-enumerable on loaded configs: never serialised or logged. */
  pin: string;
  kekLabel: string;
  sessions: number;
  /**
   * `when_alone`: a signature asked for while the signer holds no other request runs C_Sign on the main
   * thread (no hand-off to a libuv thread and back); `never`: always on a libuv thread (for an HSM whose
   * C_Sign waits on the network, where blocking the main thread would hold up the next request).
   */
  signInline: 'when_alone' | 'never';
  cacheSize: number;
  cacheTtlMs: number;
}

/** Tagged union of backend configurations (TREASURY_KEY_BACKEND). */
export type BackendConfig = Pkcs11BackendConfig | AwsKmsBackendConfig;

export interface SignerInvariants {
  allowedTokens: readonly AllowedToken[];
  /** Largest `value` (raw 6-decimal units) the signer will ever sign in one signature (TREASURY_SIGNER_MAX_PER_SIGNATURE). */
  maxValue: bigint;
  /** Longest validity window, validBefore − max(validAfter, now), in seconds. */
  maxValiditySeconds: number;
  /** The Permit2 contract Permit2 witness transfers must name as verifyingContract (lower-case). */
  permit2: string;
  /** Spenders a Permit2 witness transfer may name (lower-case); by default the x402 upto proxy only. */
  permit2Spenders: readonly string[];
  /** Allowed mints per Solana network and compute bounds (../solana/check-x402-exact-message.ts). */
  solana: SolanaInvariants;
}

export interface SignerConfig {
  socketPath: string;
  /** 0o600, or 0o660 when the API runs as another user of the socket's group (the Dockerfile's layout). */
  socketMode: 0o600 | 0o660;
  backend: BackendConfig;
  invariants: SignerInvariants;
  /** Rolling ceilings per wallet address, checked by ../limits/wallet-limiter.ts before every signature. */
  walletLimits: readonly WalletLimit[];
  /** The file that keeps `walletLimits`' windows across restarts; undefined: they start empty after each restart. */
  limitsStateFile: string | undefined;
  metricsPort: number | undefined;
  idleTimeoutMs: number;
  /** Requests accepted but not yet finished, across connections; more are refused with `busy`. */
  maxQueue: number;
  logLevel: string;
  /** Set by the sandbox: exit when the parent process goes away. */
  exitWithParent: boolean;
  /** The owner-signed policies' store and approver; undefined: off (the signer's own limits only). */
  ownerPolicies: OwnerPolicyConfig | undefined;
  /** libuv's thread pool as this process started with it (UV_THREADPOOL_SIZE): at most this many C_Sign at once. */
  libuvThreads: number;
}

function readPin(env: z.infer<typeof envSchema>): string {
  if (env.TREASURY_PKCS11_PIN !== undefined && env.TREASURY_PKCS11_PIN_FILE !== undefined) {
    throw new SignerConfigError('set TREASURY_PKCS11_PIN or TREASURY_PKCS11_PIN_FILE, not both');
  }
  if (env.TREASURY_PKCS11_PIN !== undefined) return env.TREASURY_PKCS11_PIN;
  if (env.TREASURY_PKCS11_PIN_FILE === undefined)
    throw new SignerConfigError('set TREASURY_PKCS11_PIN or TREASURY_PKCS11_PIN_FILE');
  let pin: string;
  try {
    // Only the signer's user may read its PIN: a file other users (the API's among them) can read is refused.
    const mode = fs.statSync(env.TREASURY_PKCS11_PIN_FILE).mode & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new SignerConfigError(
        `TREASURY_PKCS11_PIN_FILE is readable or writable by other users (mode 0${mode.toString(8)}); make it 0600 or 0400, owned by the signer's user`,
      );
    }
    pin = fs.readFileSync(env.TREASURY_PKCS11_PIN_FILE, 'utf8').trim();
  } catch (err) {
    if (err instanceof SignerConfigError) throw err;
    throw new SignerConfigError(
      `cannot read TREASURY_PKCS11_PIN_FILE (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (pin.length < 4) throw new SignerConfigError('TREASURY_PKCS11_PIN_FILE holds no PIN');
  return pin;
}

/** The per-signature maximum, under its name or its older one (not both), and the rolling ceilings, consistent. */
function parseLimits(e: z.infer<typeof envSchema>): { maxPerSignature: bigint; walletLimits: WalletLimit[] } {
  if (e.TREASURY_SIGNER_MAX_PER_SIGNATURE !== undefined && e.TREASURY_SIGNER_MAX_VALUE !== undefined) {
    throw new SignerConfigError(
      'set TREASURY_SIGNER_MAX_PER_SIGNATURE or its older name TREASURY_SIGNER_MAX_VALUE, not both',
    );
  }
  const maxPerSignature = BigInt(
    e.TREASURY_SIGNER_MAX_PER_SIGNATURE ?? e.TREASURY_SIGNER_MAX_VALUE ?? DEFAULT_MAX_PER_SIGNATURE,
  );
  const perHour = BigInt(e.TREASURY_SIGNER_WALLET_MAX_PER_HOUR);
  const perDay = BigInt(e.TREASURY_SIGNER_WALLET_MAX_PER_DAY);
  const perSignatureName =
    e.TREASURY_SIGNER_MAX_VALUE !== undefined ? 'TREASURY_SIGNER_MAX_VALUE' : 'TREASURY_SIGNER_MAX_PER_SIGNATURE';
  if (maxPerSignature > perHour)
    throw new SignerConfigError(`${perSignatureName} exceeds TREASURY_SIGNER_WALLET_MAX_PER_HOUR`);
  if (perHour > perDay)
    throw new SignerConfigError('TREASURY_SIGNER_WALLET_MAX_PER_HOUR exceeds TREASURY_SIGNER_WALLET_MAX_PER_DAY');
  if (e.TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE > e.TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR) {
    throw new SignerConfigError(
      'TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE exceeds TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR',
    );
  }
  if (e.TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE > e.TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR) {
    throw new SignerConfigError(
      'TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE exceeds TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR',
    );
  }
  const walletLimits: WalletLimit[] = [
    {
      name: 'wallet_signatures_minute',
      measure: 'signatures',
      windowSeconds: 60,
      max: BigInt(e.TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE),
    },
    {
      name: 'wallet_signatures_hour',
      measure: 'signatures',
      windowSeconds: 3600,
      max: BigInt(e.TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR),
    },
    { name: 'wallet_amount_hour', measure: 'amount', windowSeconds: 3600, max: perHour },
    { name: 'wallet_amount_day', measure: 'amount', windowSeconds: 86_400, max: perDay },
    {
      name: 'wallet_receipts_minute',
      measure: 'receipts',
      windowSeconds: 60,
      max: BigInt(e.TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE),
    },
    {
      name: 'wallet_receipts_hour',
      measure: 'receipts',
      windowSeconds: 3600,
      max: BigInt(e.TREASURY_SIGNER_WALLET_RECEIPTS_PER_HOUR),
    },
  ];
  return { maxPerSignature, walletLimits: walletLimits.map((l) => Object.freeze(l)) };
}

export function loadSignerConfig(env: NodeJS.ProcessEnv = process.env): SignerConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new SignerConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const limits = parseLimits(e);
  const backend = Object.freeze(parseBackend(e, env));
  const tokens = parseAllowedTokens(e.TREASURY_SIGNER_ALLOWED_TOKENS);
  const ownerPolicies = parseOwnerPolicyConfig(e, e.TREASURY_SIGNER_LIMITS_STATE_FILE);
  if (isProductionMode(env)) refuseInProduction(e, backend, ownerPolicies, tokens.explicit);
  return Object.freeze({
    socketPath: e.TREASURY_SIGNER_SOCKET,
    socketMode: e.TREASURY_SIGNER_SOCKET_MODE === '0660' ? (0o660 as const) : (0o600 as const),
    backend,
    invariants: Object.freeze({
      allowedTokens: tokens.evm,
      maxValue: limits.maxPerSignature,
      maxValiditySeconds: e.TREASURY_SIGNER_MAX_VALIDITY_SECONDS,
      permit2: e.TREASURY_SIGNER_PERMIT2_ADDRESS,
      permit2Spenders: Object.freeze(e.TREASURY_SIGNER_PERMIT2_SPENDERS),
      solana: solanaInvariants(tokens.solana),
    }),
    walletLimits: Object.freeze(limits.walletLimits),
    limitsStateFile: e.TREASURY_SIGNER_LIMITS_STATE_FILE,
    metricsPort: e.TREASURY_SIGNER_METRICS_PORT,
    idleTimeoutMs: e.TREASURY_SIGNER_IDLE_TIMEOUT_SECONDS * 1000,
    maxQueue: e.TREASURY_SIGNER_MAX_QUEUE,
    logLevel: e.TREASURY_SIGNER_LOG_LEVEL,
    exitWithParent: e.TREASURY_EXIT_WITH_PARENT === '1',
    ownerPolicies,
    libuvThreads: e.UV_THREADPOOL_SIZE,
  });
}

/** Production mode's refusals (./signer-production-mode.ts), all of them in one error; the PIN's length only. */
function refuseInProduction(
  e: z.infer<typeof envSchema>,
  backend: BackendConfig,
  ownerPolicies: OwnerPolicyConfig | undefined,
  allowedTokensSet: boolean,
): void {
  const problems = signerProductionProblems({
    pin:
      backend.kind === 'pkcs11'
        ? {
            variable: e.TREASURY_PKCS11_PIN !== undefined ? 'TREASURY_PKCS11_PIN' : 'TREASURY_PKCS11_PIN_FILE',
            length: backend.pin.length,
          }
        : undefined,
    policyStore: ownerPolicies === undefined ? undefined : { watermarkFile: ownerPolicies.watermarkFile },
    ownerPoliciesOff: e.TREASURY_SIGNER_OWNER_POLICIES === 'off',
    kmsEndpoint: backend.kind === 'aws-kms' ? backend.endpoint : undefined,
    allowedTokensSet,
  });
  if (problems.length > 0) throw new SignerConfigError(problems);
}

/** The backend's own settings: a PKCS#11 PIN is read only for pkcs11; KMS credentials are never read here. */
function parseBackend(e: z.infer<typeof envSchema>, env: NodeJS.ProcessEnv): BackendConfig {
  if (
    e.TREASURY_KEY_BACKEND !== undefined &&
    e.TREASURY_SIGNER_BACKEND !== undefined &&
    e.TREASURY_KEY_BACKEND !== e.TREASURY_SIGNER_BACKEND
  ) {
    throw new SignerConfigError('TREASURY_KEY_BACKEND and its older name TREASURY_SIGNER_BACKEND disagree; set one');
  }
  const kind = e.TREASURY_KEY_BACKEND ?? e.TREASURY_SIGNER_BACKEND ?? 'pkcs11';
  refuseCredentialVariables(env);
  if (kind === 'aws-kms') return parseAwsKmsBackend(e);
  const backend = {
    kind: 'pkcs11' as const,
    modulePath: e.TREASURY_PKCS11_MODULE,
    tokenLabel: e.TREASURY_PKCS11_TOKEN_LABEL,
    tokenSerial: e.TREASURY_PKCS11_TOKEN_SERIAL,
    kekLabel: e.TREASURY_PKCS11_KEK_LABEL,
    sessions: e.TREASURY_PKCS11_SESSIONS,
    signInline: e.TREASURY_PKCS11_SIGN_INLINE,
    cacheSize: e.TREASURY_SIGNER_KEY_CACHE_SIZE,
    cacheTtlMs: e.TREASURY_SIGNER_KEY_CACHE_TTL_SECONDS * 1000,
  } as Pkcs11BackendConfig;
  Object.defineProperty(backend, 'pin', { value: readPin(e), enumerable: false });
  return backend;
}

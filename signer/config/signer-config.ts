/**
 * Configuration of treasury-signer, parsed once from the environment with zod and frozen.
 *
 * Defends: a signer started with no allowed tokens, no PIN or an unknown backend refuses to start.
 * The PIN is read here and handed to the backend only; it is never logged.
 */
import fs from 'node:fs';
import { z } from 'zod';

const allowedTokenSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}:0x[0-9a-fA-F]{40}$/, 'expected chainId:0xaddress')
  .transform((v) => {
    const [chainId, address] = v.split(':') as [string, string];
    return { chainId: Number(chainId), address: address.toLowerCase() };
  });

const envSchema = z.object({
  TREASURY_SIGNER_SOCKET: z.string().min(1),
  TREASURY_SIGNER_BACKEND: z.enum(['pkcs11']).default('pkcs11'),
  TREASURY_PKCS11_MODULE: z.string().default('/usr/lib/softhsm/libsofthsm2.so'),
  TREASURY_PKCS11_TOKEN_LABEL: z.string().min(1).max(32).default('treasury'),
  TREASURY_PKCS11_PIN: z.string().min(4).optional(),
  TREASURY_PKCS11_PIN_FILE: z.string().optional(),
  TREASURY_PKCS11_KEK_LABEL: z.string().min(1).max(64).default('treasury-root-kek'),
  TREASURY_PKCS11_SESSIONS: z.coerce.number().int().min(1).max(64).default(4),
  TREASURY_SIGNER_KEY_CACHE_SIZE: z.coerce.number().int().min(0).max(100_000).default(10_000),
  TREASURY_SIGNER_KEY_CACHE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  TREASURY_SIGNER_ALLOWED_TOKENS: z
    .string()
    .default('8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913,84532:0x036CbD53842c5426634e7929541eC2318f3dCF7e'),
  TREASURY_SIGNER_MAX_VALUE: z.string().regex(/^[1-9][0-9]{0,30}$/).default('1000000000000'),
  TREASURY_SIGNER_MAX_VALIDITY_SECONDS: z.coerce.number().int().min(1).max(31 * 86_400).default(86_400),
  TREASURY_SIGNER_METRICS_PORT: z.coerce.number().int().min(1).max(65_535).optional(),
  TREASURY_SIGNER_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TREASURY_EXIT_WITH_PARENT: z.enum(['0', '1']).default('0'),
});

export interface AllowedToken {
  chainId: number;
  /** lower-case */
  address: string;
}

export interface Pkcs11BackendConfig {
  kind: 'pkcs11';
  modulePath: string;
  tokenLabel: string;
  pin: string;
  kekLabel: string;
  sessions: number;
  cacheSize: number;
  cacheTtlMs: number;
}

export type BackendConfig = Pkcs11BackendConfig;

export interface SignerInvariants {
  allowedTokens: readonly AllowedToken[];
  maxValue: bigint;
  maxValiditySeconds: number;
}

export interface SignerConfig {
  socketPath: string;
  backend: BackendConfig;
  invariants: SignerInvariants;
  metricsPort: number | undefined;
  logLevel: string;
  /** Set by the sandbox: exit when the parent process goes away. */
  exitWithParent: boolean;
}

export function loadSignerConfig(env: NodeJS.ProcessEnv = process.env): SignerConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid signer configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  const e = parsed.data;
  const pin = e.TREASURY_PKCS11_PIN ?? (e.TREASURY_PKCS11_PIN_FILE ? fs.readFileSync(e.TREASURY_PKCS11_PIN_FILE, 'utf8').trim() : undefined);
  if (!pin) throw new Error('invalid signer configuration: set TREASURY_PKCS11_PIN or TREASURY_PKCS11_PIN_FILE');
  const allowedTokens = e.TREASURY_SIGNER_ALLOWED_TOKENS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => allowedTokenSchema.parse(s));
  if (allowedTokens.length === 0) throw new Error('invalid signer configuration: TREASURY_SIGNER_ALLOWED_TOKENS is empty');
  return Object.freeze({
    socketPath: e.TREASURY_SIGNER_SOCKET,
    backend: Object.freeze({
      kind: 'pkcs11' as const,
      modulePath: e.TREASURY_PKCS11_MODULE,
      tokenLabel: e.TREASURY_PKCS11_TOKEN_LABEL,
      pin,
      kekLabel: e.TREASURY_PKCS11_KEK_LABEL,
      sessions: e.TREASURY_PKCS11_SESSIONS,
      cacheSize: e.TREASURY_SIGNER_KEY_CACHE_SIZE,
      cacheTtlMs: e.TREASURY_SIGNER_KEY_CACHE_TTL_SECONDS * 1000,
    }),
    invariants: Object.freeze({
      allowedTokens: Object.freeze(allowedTokens),
      maxValue: BigInt(e.TREASURY_SIGNER_MAX_VALUE),
      maxValiditySeconds: e.TREASURY_SIGNER_MAX_VALIDITY_SECONDS,
    }),
    metricsPort: e.TREASURY_SIGNER_METRICS_PORT,
    logLevel: e.TREASURY_SIGNER_LOG_LEVEL,
    exitWithParent: e.TREASURY_EXIT_WITH_PARENT === '1',
  });
}

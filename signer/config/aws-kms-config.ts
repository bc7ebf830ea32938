/**
 * The AWS KMS backend's settings (TREASURY_KEY_BACKEND=aws-kms), part of the signer's configuration
 * (./signer-config.ts parses the whole environment once).
 *
 * Protects against: AWS credentials in Treasury's own settings (TREASURY_KMS_*_KEY and the like are refused:
 * credentials come only from the AWS SDK's default provider chain), a KMS backend without a Region, and an
 * attempt timeout longer than the deadline it must fit in.
 * Known limits: AWS_* variables are read by the AWS SDK itself, not here.
 */
import { z } from 'zod';
import { ALIAS_PREFIX_PATTERN } from '../backends/aws-kms/kms-key-ref.js';
import { SignerConfigError } from './signer-config-error.js';

/**
 * The KMS sign rate this signer keeps to by default: 300/s, the ECC Sign/Verify quota AWS documented
 * for years and still uses in its examples (the current quota page says 1,000/s, shared by every caller
 * in the account and Region; docs/aws-kms.md). Raise it to your share of the quota in Service Quotas.
 */
const DEFAULT_KMS_SIGN_RATE = 300;
/** Credentials come from the AWS SDK's default provider chain only; these names are refused if set. */
const REFUSED_CREDENTIAL_VARIABLES = [
  'TREASURY_KMS_ACCESS_KEY_ID',
  'TREASURY_KMS_SECRET_ACCESS_KEY',
  'TREASURY_KMS_SESSION_TOKEN',
  'TREASURY_AWS_ACCESS_KEY_ID',
  'TREASURY_AWS_SECRET_ACCESS_KEY',
];

export const awsKmsEnvShape = {
  TREASURY_KMS_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$/, 'expected an AWS Region such as eu-west-1')
    .optional(),
  /** Endpoint override (a VPC endpoint, or the emulator in tests and the sandbox); unset: the Region's public endpoint. */
  TREASURY_KMS_ENDPOINT: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .optional(),
  /** Sign calls per second this signer allows itself (0: no limit): its share of the account's ECC Sign quota. */
  TREASURY_KMS_SIGN_RATE_PER_SECOND: z.coerce.number().int().min(0).max(100_000).default(DEFAULT_KMS_SIGN_RATE),
  /** Each KMS operation, retries and the wait for the sign rate included, ends by this many ms. */
  TREASURY_KMS_DEADLINE_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  TREASURY_KMS_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(2000),
  /** KMS's pending window before a destroyed key is deleted: 7 (the KMS minimum, default) to 30 days. */
  TREASURY_KMS_DELETION_WINDOW_DAYS: z.coerce.number().int().min(7).max(30).default(7),
  TREASURY_KMS_ALIAS_PREFIX: z
    .string()
    .regex(ALIAS_PREFIX_PATTERN, 'expected letters, digits, _ or - (segments joined by /, not starting with aws)')
    .default('treasury'),
  TREASURY_KMS_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(4096).default(64),
  TREASURY_KMS_TOMBSTONE_FILE: z.string().min(1).max(4096).optional(),
  /** When set, each wallet key gets the per-account key policy of ../backends/aws-kms/kms-key-policy.ts naming this principal. */
  TREASURY_KMS_SIGNER_PRINCIPAL_ARN: z
    .string()
    .regex(/^arn:aws[a-z-]*:(iam|sts)::[0-9]{12}:[A-Za-z0-9+=,.@_/-]{1,512}$/, 'expected an IAM principal ARN')
    .optional(),
  TREASURY_KMS_ADMIN_PRINCIPAL_ARN: z
    .string()
    .regex(/^arn:aws[a-z-]*:(iam|sts)::[0-9]{12}:[A-Za-z0-9+=,.@_/-]{1,512}$/, 'expected an IAM principal ARN')
    .optional(),
};

export interface AwsKmsBackendConfig {
  kind: 'aws-kms';
  region: string;
  /** Endpoint override; undefined: the Region's endpoint (or AWS_ENDPOINT_URL_KMS, read by the SDK). */
  endpoint: string | undefined;
  /** Sign calls per second (0: unlimited), enforced before the SDK (../backends/aws-kms/kms-sign-rate.ts). */
  signRatePerSecond: number;
  deadlineMs: number;
  attemptTimeoutMs: number;
  deletionWindowDays: number;
  aliasPrefix: string;
  /** Requests the server runs at once (KMS calls are network-bound: many may wait together). */
  maxInFlight: number;
  tombstoneFile: string | undefined;
  signerPrincipalArn: string | undefined;
  adminPrincipalArn: string | undefined;
  /** Public keys remembered per wallet key (public data). */
  cacheSize: number;
}

/** Refuses, whatever the backend, any variable that would put an AWS credential in Treasury's settings. */
export function refuseCredentialVariables(env: NodeJS.ProcessEnv): void {
  const credentialVariable = REFUSED_CREDENTIAL_VARIABLES.find((name) => env[name] !== undefined);
  if (credentialVariable) {
    throw new SignerConfigError(
      `${credentialVariable} is not read; AWS credentials come only from the SDK's default provider chain (environment AWS_*, shared config, web identity, instance role)`,
    );
  }
}

type AwsKmsEnv = z.infer<z.ZodObject<typeof awsKmsEnvShape>> & { TREASURY_SIGNER_KEY_CACHE_SIZE: number };

export function parseAwsKmsBackend(e: AwsKmsEnv): AwsKmsBackendConfig {
  if (e.TREASURY_KMS_REGION === undefined)
    throw new SignerConfigError('TREASURY_KMS_REGION is required with TREASURY_KEY_BACKEND=aws-kms');
  if (e.TREASURY_KMS_ATTEMPT_TIMEOUT_MS > e.TREASURY_KMS_DEADLINE_MS)
    throw new SignerConfigError('TREASURY_KMS_ATTEMPT_TIMEOUT_MS exceeds TREASURY_KMS_DEADLINE_MS');
  return {
    kind: 'aws-kms',
    region: e.TREASURY_KMS_REGION,
    endpoint: e.TREASURY_KMS_ENDPOINT,
    signRatePerSecond: e.TREASURY_KMS_SIGN_RATE_PER_SECOND,
    deadlineMs: e.TREASURY_KMS_DEADLINE_MS,
    attemptTimeoutMs: e.TREASURY_KMS_ATTEMPT_TIMEOUT_MS,
    deletionWindowDays: e.TREASURY_KMS_DELETION_WINDOW_DAYS,
    aliasPrefix: e.TREASURY_KMS_ALIAS_PREFIX,
    maxInFlight: e.TREASURY_KMS_MAX_IN_FLIGHT,
    tombstoneFile: e.TREASURY_KMS_TOMBSTONE_FILE,
    signerPrincipalArn: e.TREASURY_KMS_SIGNER_PRINCIPAL_ARN,
    adminPrincipalArn: e.TREASURY_KMS_ADMIN_PRINCIPAL_ARN,
    cacheSize: e.TREASURY_SIGNER_KEY_CACHE_SIZE,
  };
}

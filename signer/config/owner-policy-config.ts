/**
 * The owner-signed policies' settings (docs/adr/0012-owner-signed-policies.md), part of the signer's
 * configuration (./signer-config.ts parses the whole environment once): the signer's own database, the
 * deployment's policy approver, and the file that keeps the highest store generation the signer has seen
 * (../owner-policy/store-watermark.ts: by default beside the limits state file) with the one acknowledgement of an
 * older store (TREASURY_SIGNER_ACCEPT_STORE_GENERATION, an exact generation: it cannot be left on to accept any
 * later restore).
 *
 * Defends: the database's password in logs or errors — the URL is kept as a non-enumerable property, never
 * printed (the ready line says only whether owner policies are on); a URL that is not PostgreSQL's; an
 * approver that is not an address. Does not defend: which role the URL names — deploy the signer with a role
 * of its own that the API's role cannot use (docs/deploy-hsm.md).
 */
import path from 'node:path';
import { z } from 'zod';
import { SignerConfigError } from './signer-config-error.js';

export const ownerPolicyEnvShape = {
  /** The signer's own PostgreSQL database (owner-signed policies and their spend windows); unset: they are off. */
  TREASURY_SIGNER_DATABASE_URL: z.string().min(1).max(2048).optional(),
  TREASURY_SIGNER_DATABASE_POOL: z.coerce.number().int().min(1).max(64).default(8),
  /** How long the store's word that a wallet has no signed policy lets its spends be recorded after release; 0: never. */
  TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: z.coerce.number().int().min(0).max(10_000).default(250),
  /** The address whose signature sets the policies of accounts that have no owner key (made with an api key). */
  TREASURY_SIGNER_POLICY_APPROVER: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x address')
    .optional(),
  /**
   * Where the highest policy-store generation this signer has seen is kept (a store restored from an older snapshot
   * is refused at start); unset: `store-watermark.json` beside TREASURY_SIGNER_LIMITS_STATE_FILE, or none.
   */
  TREASURY_SIGNER_STORE_WATERMARK_FILE: z.string().min(1).max(4096).optional(),
  /** Start once on a policy store older than the watermark file: its exact generation, as the refusal names it. */
  TREASURY_SIGNER_ACCEPT_STORE_GENERATION: z
    .string()
    .regex(/^(0|[1-9][0-9]{0,14})$/, 'expected the store generation the refusal named')
    .optional(),
};

export interface OwnerPolicyConfig {
  /** Non-enumerable: never serialised or logged. */
  databaseUrl: string;
  poolMax: number;
  /** ../owner-policy/open-spend-leases.ts: 0 records every spend before its signature leaves. */
  openSpendLeaseMs: number;
  approver: string | null;
  /** ../owner-policy/store-watermark.ts; undefined: a restored store is seen only by a running process. */
  watermarkFile: string | undefined;
  /** The one store generation below the watermark that may be used (once). */
  acceptStoreGeneration: number | undefined;
}

const ownerPolicyEnvSchema = z.object(ownerPolicyEnvShape);
type OwnerPolicyEnv = z.output<typeof ownerPolicyEnvSchema>;

/** The watermark file's default: beside the limits state file (the signer's own directory), when there is one. */
export const DEFAULT_WATERMARK_FILE_NAME = 'store-watermark.json';

/** Undefined when no database is configured (owner policies off). */
export function parseOwnerPolicyConfig(
  e: OwnerPolicyEnv,
  limitsStateFile: string | undefined,
): OwnerPolicyConfig | undefined {
  if (e.TREASURY_SIGNER_DATABASE_URL === undefined) {
    for (const name of [
      'TREASURY_SIGNER_POLICY_APPROVER',
      'TREASURY_SIGNER_STORE_WATERMARK_FILE',
      'TREASURY_SIGNER_ACCEPT_STORE_GENERATION',
    ] as const) {
      if (e[name] !== undefined)
        throw new SignerConfigError(`${name} needs TREASURY_SIGNER_DATABASE_URL (the policy store)`);
    }
    return undefined;
  }
  let protocol: string;
  try {
    protocol = new URL(e.TREASURY_SIGNER_DATABASE_URL).protocol;
  } catch {
    throw new SignerConfigError('TREASURY_SIGNER_DATABASE_URL is not a URL');
  }
  if (protocol !== 'postgres:' && protocol !== 'postgresql:') {
    throw new SignerConfigError('TREASURY_SIGNER_DATABASE_URL must be a postgres:// URL');
  }
  const config = {
    poolMax: e.TREASURY_SIGNER_DATABASE_POOL,
    openSpendLeaseMs: e.TREASURY_SIGNER_OPEN_SPEND_LEASE_MS,
    approver: e.TREASURY_SIGNER_POLICY_APPROVER ?? null,
    watermarkFile:
      e.TREASURY_SIGNER_STORE_WATERMARK_FILE ??
      (limitsStateFile === undefined
        ? undefined
        : path.join(path.dirname(limitsStateFile), DEFAULT_WATERMARK_FILE_NAME)),
    acceptStoreGeneration:
      e.TREASURY_SIGNER_ACCEPT_STORE_GENERATION === undefined
        ? undefined
        : Number(e.TREASURY_SIGNER_ACCEPT_STORE_GENERATION),
  };
  Object.defineProperty(config, 'databaseUrl', { value: e.TREASURY_SIGNER_DATABASE_URL, enumerable: false });
  return Object.freeze(config) as OwnerPolicyConfig;
}

/**
 * The owner-signed policies' settings (docs/adr/0012-owner-signed-policies.md), part of the signer's
 * configuration (./signer-config.ts parses the whole environment once): the signer's own database, the
 * deployment's policy approver, and the file that keeps the highest store generation the signer has seen
 * (../owner-policy/store-watermark.ts: by default beside the limits state file) with the one acknowledgement of an
 * older store (TREASURY_SIGNER_ACCEPT_STORE_GENERATION, an exact generation: it cannot be left on to accept any
 * later restore).
 *
 * Production mode (./signer-production-mode.ts, read here through `productionModeEnvShape`) runs with the store, or
 * without it only when TREASURY_SIGNER_OWNER_POLICIES=off says so (refused by ./signer-config.ts beside production
 * mode's other problems); the store's placement rules (`placement`: production mode and the roles
 * TREASURY_SIGNER_ACCEPT_STORE_ROLES names) are what ../owner-policy/store-placement.ts holds the roles that can reach
 * the store to, handed to the store by ../main.ts (the store reads no environment).
 *
 * Defends: the database's password in logs or errors — the URL is kept as a non-enumerable property, never
 * printed (the ready line says only whether owner policies are on); a URL that is not PostgreSQL's; an
 * approver that is not an address; a production signer left without its store by a forgotten variable; an
 * acknowledgement of other roles that names none, or names them so that any later one would pass (each is named
 * exactly). Does not defend: which role the URL names — deploy the signer with a role of its own that the API's
 * role cannot use (docs/deploy-hsm.md, "The signer's policy store: a database and a role of its own"); the start
 * checks what PostgreSQL reports of the other roles (../owner-policy/store-placement.ts).
 */
import path from 'node:path';
import { z } from 'zod';
import { SignerConfigError } from './signer-config-error.js';
import { isProductionMode, productionModeEnvShape } from './signer-production-mode.js';

/** The most roles TREASURY_SIGNER_ACCEPT_STORE_ROLES may name. */
export const MAX_ACCEPTED_STORE_ROLES = 32;

/**
 * A comma-separated list of PostgreSQL role names, as the start's refusal spells them (at most 63 characters each,
 * no space, comma or control character): split, trimmed, at least one.
 */
const acceptedRolesSchema = z
  .string()
  .max(2048)
  .transform((v) =>
    v
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== ''),
  )
  .pipe(
    z
      .array(z.string().regex(/^[^\s,\p{Cc}]{1,63}$/u, 'expected role names (63 characters at most, no space)'))
      .min(1, 'name at least one role, or leave it unset')
      .max(MAX_ACCEPTED_STORE_ROLES),
  );

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
  /** `off`: no policy store, on purpose (production mode refuses to start without one otherwise); `on`: one is required. */
  TREASURY_SIGNER_OWNER_POLICIES: z.enum(['on', 'off']).optional(),
  /**
   * Roles besides the signer's own that the start found able to reach the store, accepted by name: still warned of,
   * no longer refused in production mode (../owner-policy/store-placement.ts).
   */
  TREASURY_SIGNER_ACCEPT_STORE_ROLES: acceptedRolesSchema.optional(),
  ...productionModeEnvShape,
};

/** How ../owner-policy/store-placement.ts treats the roles other than the signer's that can reach the store. */
export interface StorePlacementRules {
  /** Production mode: such a role stops the start unless it is accepted. */
  production: boolean;
  /** TREASURY_SIGNER_ACCEPT_STORE_ROLES: warned of, never refused. */
  acceptedRoles: readonly string[];
}

/** The placement rules of the parsed environment: production mode and the roles accepted by name. */
function rulesOf(e: OwnerPolicyEnv): StorePlacementRules {
  return Object.freeze({
    production: isProductionMode({ NODE_ENV: e.NODE_ENV, TREASURY_ENV: e.TREASURY_ENV }),
    acceptedRoles: Object.freeze([...(e.TREASURY_SIGNER_ACCEPT_STORE_ROLES ?? [])]),
  });
}

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
  /** Production mode and the roles accepted beside the signer's (../owner-policy/store-placement.ts). */
  placement: StorePlacementRules;
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
      'TREASURY_SIGNER_ACCEPT_STORE_ROLES',
    ] as const) {
      if (e[name] !== undefined)
        throw new SignerConfigError(`${name} needs TREASURY_SIGNER_DATABASE_URL (the policy store)`);
    }
    if (e.TREASURY_SIGNER_OWNER_POLICIES === 'on')
      throw new SignerConfigError(
        'TREASURY_SIGNER_OWNER_POLICIES: is on, and TREASURY_SIGNER_DATABASE_URL (the policy store) is not set',
      );
    // Production mode without a store (and without TREASURY_SIGNER_OWNER_POLICIES=off): ./signer-config.ts lists it
    // among production mode's problems (./signer-production-mode.ts).
    return undefined;
  }
  if (e.TREASURY_SIGNER_OWNER_POLICIES === 'off')
    throw new SignerConfigError(
      'TREASURY_SIGNER_OWNER_POLICIES: is off, and TREASURY_SIGNER_DATABASE_URL sets up the policy store; unset one of them',
    );
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
    placement: rulesOf(e),
  };
  Object.defineProperty(config, 'databaseUrl', { value: e.TREASURY_SIGNER_DATABASE_URL, enumerable: false });
  return Object.freeze(config) as OwnerPolicyConfig;
}

/**
 * Production mode for treasury-signer (`NODE_ENV=production` or `TREASURY_ENV=production`, as treasury-api and the
 * gate decide it: src/api/config/production-mode.ts, src/gate/gate-config.ts; the images set `NODE_ENV`): the
 * settings the signer refuses to start with there. ./signer-config.ts asks once, after the rest of the
 * configuration was read, and throws one `SignerConfigError` listing every problem found, each naming its variable
 * first and never a secret's value; main.ts prints it as one line and exits 1 before anything is opened.
 *
 * Defends against, in production mode:
 *  - the HSM PIN in the environment (`TREASURY_PKCS11_PIN`): an environment is copied into child processes,
 *    `/proc/<pid>/environ`, crash reports and `docker inspect`; the PIN must come from `TREASURY_PKCS11_PIN_FILE`
 *    (0600 or 0400, which ./signer-config.ts already holds to);
 *  - a PIN shorter than `MIN_PRODUCTION_PIN_LENGTH` characters, from either source (a guessable PIN is the HSM's only
 *    lock against whoever reaches the token's files or the module);
 *  - a policy store (`TREASURY_SIGNER_DATABASE_URL`) without a watermark file (`TREASURY_SIGNER_STORE_WATERMARK_FILE`,
 *    or its default beside `TREASURY_SIGNER_LIMITS_STATE_FILE`): a store restored from an older backup — spends and
 *    policies forgotten — would be served as current (../owner-policy/store-watermark.ts);
 *  - the KMS emulator's plain-HTTP endpoint (`TREASURY_KMS_ENDPOINT=http://…`, the sandbox's and the tests'): the
 *    public keys wallet addresses are derived from would travel unauthenticated;
 *  - an unset `TREASURY_SIGNER_ALLOWED_TOKENS`: a production signer signs for the tokens its operator named, never
 *    for a built-in list (the default, testnet tokens only, is for the sandbox and the tests: ./allowed-tokens.ts);
 *    a set but empty list is refused in every mode;
 *  - no policy store (`TREASURY_SIGNER_DATABASE_URL`) unless `TREASURY_SIGNER_OWNER_POLICIES=off` says so: without
 *    it the signer enforces no owner-signed policy (docs/adr/0012-owner-signed-policies.md), and a deployment that
 *    forgot the variable would not know. Listed beside the other problems, never alone before them.
 * At run time, not here: a policy store that roles other than the signer's can reach is refused in production mode
 * unless named in `TREASURY_SIGNER_ACCEPT_STORE_ROLES` (../owner-policy/store-placement.ts).
 * Does not defend: a long PIN that is still guessable; a watermark file that cannot be written (refused at start by
 * ../owner-policy/store-watermark.ts); endpoints the AWS SDK reads itself (`AWS_ENDPOINT_URL*`).
 * Considered and left allowed: `TREASURY_EXIT_WITH_PARENT=1` (set by the sandbox) only makes the signer stop
 * sooner — treasury-api and the gate accept it in production mode too.
 * Outside production mode nothing here applies (the sandbox and the tests run as before).
 */

import { z } from 'zod';

/** True under `NODE_ENV=production` or `TREASURY_ENV=production` (as treasury-api and the gate decide it). */
export function isProductionMode(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.NODE_ENV === 'production' || env.TREASURY_ENV === 'production';
}

/** The variables production mode is read from, for a schema whose parsed output must decide it (`isProductionMode`). */
export const productionModeEnvShape = {
  /** `production`: production mode, as `TREASURY_ENV=production`; the images set it. */
  NODE_ENV: z.string().max(64).optional(),
  /** `production`: production mode, as `NODE_ENV=production`. */
  TREASURY_ENV: z.string().max(64).optional(),
};

/** The shortest HSM user PIN production mode accepts. */
export const MIN_PRODUCTION_PIN_LENGTH = 8;

/** What the production checks look at, as ./signer-config.ts read it (no secret: the PIN's length only). */
export interface SignerProductionFacts {
  /** The PKCS#11 PIN's source variable and length; undefined on a backend without a PIN (aws-kms). */
  pin: { variable: 'TREASURY_PKCS11_PIN' | 'TREASURY_PKCS11_PIN_FILE'; length: number } | undefined;
  /** The policy store, when TREASURY_SIGNER_DATABASE_URL sets one up, with the watermark file it keeps. */
  policyStore: { watermarkFile: string | undefined } | undefined;
  /** TREASURY_SIGNER_OWNER_POLICIES=off: the signer runs without a policy store on purpose. */
  ownerPoliciesOff: boolean;
  /** TREASURY_KMS_ENDPOINT on the aws-kms backend; undefined otherwise. */
  kmsEndpoint: string | undefined;
  /** Whether TREASURY_SIGNER_ALLOWED_TOKENS was set (false: the testnet default would apply). */
  allowedTokensSet: boolean;
}

/** Every setting production mode refuses, each `VARIABLE: what is wrong and what to do`; empty when none. */
export function signerProductionProblems(facts: SignerProductionFacts): string[] {
  const problems: string[] = [];
  if (facts.pin?.variable === 'TREASURY_PKCS11_PIN')
    problems.push(
      "TREASURY_PKCS11_PIN: a PIN in the environment is refused in production mode; put it in a file readable by the signer's user only (0600) and name it in TREASURY_PKCS11_PIN_FILE",
    );
  if (facts.pin !== undefined && facts.pin.length < MIN_PRODUCTION_PIN_LENGTH)
    problems.push(
      `${facts.pin.variable}: the PIN is shorter than ${MIN_PRODUCTION_PIN_LENGTH} characters; production mode needs at least ${MIN_PRODUCTION_PIN_LENGTH} (re-initialise the token's user PIN)`,
    );
  if (facts.policyStore === undefined && !facts.ownerPoliciesOff)
    problems.push(
      "TREASURY_SIGNER_DATABASE_URL: is not set; production mode runs with the signer's policy store, which enforces the owners' signed policies even against the API (docs/deploy-hsm.md, \"The signer's policy store: a database and a role of its own\"), or without it only when TREASURY_SIGNER_OWNER_POLICIES=off says so",
    );
  if (facts.policyStore !== undefined && facts.policyStore.watermarkFile === undefined)
    problems.push(
      'TREASURY_SIGNER_STORE_WATERMARK_FILE: is not set, nor TREASURY_SIGNER_LIMITS_STATE_FILE beside which it is kept by default; production mode refuses a policy store (TREASURY_SIGNER_DATABASE_URL) whose restore from an older backup would go unnoticed',
    );
  if (facts.kmsEndpoint !== undefined && new URL(facts.kmsEndpoint).protocol !== 'https:')
    problems.push(
      "TREASURY_KMS_ENDPOINT: is not https (the KMS emulator's plain HTTP is for the sandbox and the tests); production mode reaches KMS over https only",
    );
  if (!facts.allowedTokensSet)
    problems.push(
      'TREASURY_SIGNER_ALLOWED_TOKENS: is not set; production mode signs only for tokens named explicitly (e.g. 8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913 for USDC on Base), the default names testnet tokens only',
    );
  return problems;
}

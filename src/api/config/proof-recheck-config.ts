/**
 * How often the API fetches a proof of control again (src/api/sellers/proofs/): a seller's origin, a gate's URL and
 * its base domain — their environment variables, part of the API's one configuration schema (./bounds-config.ts
 * joins them in), and the fields of `AppConfig` they become.
 * - TREASURY_PROOF_RECHECK_SECONDS: a proven proof is fetched again at most once per this many seconds;
 * - TREASURY_PROOF_GRACE_SECONDS: a proof whose file cannot be fetched (unreachable, time-out, 5xx, too large) is
 *   kept until its last success is this old, then withdrawn.
 *
 * Defends: a value out of its range (a minute to 30 days; a grace up to 90 days), and a grace shorter than the
 * interval — a proof would then be withdrawn by the first transient failure after a success — both refused at start
 * (`config_invalid`, the variable named). Does not defend: what the re-checker does with them (it enforces them).
 */
import { z } from 'zod';
import { ConfigError } from '../../../base/config-error.js';
import { envInt } from '../../shared/env-int.js';

export const DEFAULT_PROOF_RECHECK_SECONDS = 86_400;
export const DEFAULT_PROOF_GRACE_SECONDS = 604_800;

export const proofRecheckEnvShape = {
  /** Seconds between two fetches of one proven proof (60 s to 30 days). */
  TREASURY_PROOF_RECHECK_SECONDS: envInt(60, 2_592_000, DEFAULT_PROOF_RECHECK_SECONDS),
  /** Seconds a proof that cannot be fetched stays proven after its last success (60 s to 90 days; ≥ the interval). */
  TREASURY_PROOF_GRACE_SECONDS: envInt(60, 7_776_000, DEFAULT_PROOF_GRACE_SECONDS),
};

type ProofRecheckEnv = { [K in keyof typeof proofRecheckEnvShape]: z.infer<(typeof proofRecheckEnvShape)[K]> };

export type ProofRecheckConfig = Readonly<{
  /** TREASURY_PROOF_RECHECK_SECONDS and TREASURY_PROOF_GRACE_SECONDS. */
  proofRecheck: Readonly<{ intervalSeconds: number; graceSeconds: number }>;
}>;

export function proofRecheckConfigOf(e: ProofRecheckEnv): ProofRecheckConfig {
  if (e.TREASURY_PROOF_GRACE_SECONDS < e.TREASURY_PROOF_RECHECK_SECONDS)
    throw new ConfigError(
      'api',
      `TREASURY_PROOF_GRACE_SECONDS: must be at least TREASURY_PROOF_RECHECK_SECONDS (${e.TREASURY_PROOF_RECHECK_SECONDS})`,
    );
  return {
    proofRecheck: Object.freeze({
      intervalSeconds: e.TREASURY_PROOF_RECHECK_SECONDS,
      graceSeconds: e.TREASURY_PROOF_GRACE_SECONDS,
    }),
  };
}

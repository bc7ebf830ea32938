/**
 * What GET /v1/sandbox/faucets answers (src/api/faucets/): where the sandbox's faucets listen, so that `xx fund
 * --testnet` finds them from the API URL alone, wherever it runs (docs/sandbox.md). Defined once here: the route
 * is typed with the derived type and the CLI reads it.
 *
 * Defends: the server and the CLI drifting apart silently. Does not defend: a reply of the right shape with wrong
 * content (the CLI calls a faucet only on loopback all the same).
 */
import { z } from 'zod';

export const sandboxFaucetsSchema = z.object({
  /** The EVM faucet (`faucet_url` of sandbox.json), or null when this sandbox runs none. */
  faucet_url: z.string().url().nullable(),
  /** The Solana faucet (`solana_faucet_url` of sandbox.json), or null. */
  solana_faucet_url: z.string().url().nullable(),
});
export type SandboxFaucets = z.infer<typeof sandboxFaucetsSchema>;

/**
 * The one rule for the Solana RPC a sandbox API reads (TREASURY_SOLANA_RPC_URL): in sandbox mode it is an
 * http(s) URL on loopback (127.0.0.0/8, [::1], localhost) — the sandbox's own offline chain, or a local
 * validator the user runs with TREASURY_SANDBOX_SOLANA=0. Anything else stops `npm start` with the stable
 * code `sandbox_solana_rpc_not_loopback` before any part starts, and again where the API's environment is
 * built (./solana-api-env.ts), so no path hands the sandbox's API a public cluster.
 * Defends against: a sandbox wallet (whose keys and policies are a development setup) reading balances and
 * blockhashes from, and so paying on, a public Solana cluster by a variable left in the shell.
 * Does not: check who answers on the loopback port (any local process may listen there).
 */
import { isLoopbackHttpUrl } from '../../../src/shared/loopback-host.js';
import { SandboxError } from '../sandbox-error.js';

/** Whether `raw` is an http(s) URL on a loopback host (the shared rule: src/shared/loopback-host.ts). */
export function isLoopbackRpcUrl(raw: string): boolean {
  return isLoopbackHttpUrl(raw);
}

/** Throws `sandbox_solana_rpc_not_loopback` unless `raw` is a loopback http(s) URL; `source` names where it came from. */
export function assertLoopbackSolanaRpc(raw: string, source: string): string {
  if (!isLoopbackRpcUrl(raw))
    throw new SandboxError(
      'sandbox_solana_rpc_not_loopback',
      `${source} must be an http(s) URL on loopback (127.0.0.1, [::1], localhost) in the sandbox; unset it to use the sandbox's own Solana chain`,
    );
  return raw;
}

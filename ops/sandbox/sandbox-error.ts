/**
 * A refusal of `npm start` with a stable snake_case code (printed as `sandbox failed to start
 * (<code>): <message>`), for the misconfigurations a script or a test must tell apart from a crash.
 * Codes: `sandbox_solana_rpc_not_loopback` (./solana/solana-rpc-loopback.ts).
 * Does not: carry secrets; the message names variables, never their values.
 */
export type SandboxErrorCode = 'sandbox_solana_rpc_not_loopback';

export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

/**
 * The JSON-RPC errors the local Solana RPC answers, with the codes a Solana validator uses, so that kit's
 * RPC client raises the same errors it would against devnet.
 * Defends against: internal error text leaking as a method's result; every refusal is a coded error.
 * Does not: carry stack traces or request data in `data`.
 */
export const RPC_PARSE_ERROR = -32700;
export const RPC_INVALID_REQUEST = -32600;
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INVALID_PARAMS = -32602;
export const RPC_INTERNAL_ERROR = -32603;
/** A validator's `sendTransaction` preflight failure (also: a transaction that would never land). */
export const RPC_SEND_TRANSACTION_PREFLIGHT_FAILURE = -32002;
export const RPC_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE = -32003;

export class SolanaRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'SolanaRpcError';
  }
}

export function invalidParams(message: string): SolanaRpcError {
  return new SolanaRpcError(RPC_INVALID_PARAMS, `Invalid params: ${message}`);
}

/**
 * Static invariants the signer re-checks on every signature, whatever the front decided: the token
 * contract and chain are allowed, the authorization is from the wallet being used, the value is positive
 * and bounded, and the validity window is open, ordered and short. Small named helpers that name the bad
 * argument (noble's `abytes` style).
 *
 * Defends: a compromised or buggy front asking for a signature on another chain or token, for another
 * address, for an absurd value, or one that stays valid for months.
 * Does not defend: spend policy (caps, velocity, counterparties) — that is the front's job, under lock.
 */
import type { Eip712Domain, TransferWithAuthorization } from './protocol/signer-protocol.js';
import type { SignerInvariants } from './config/signer-config.js';
import { SignerFault } from './signer-error.js';

export function invariant(condition: boolean, message: string): asserts condition {
  if (!condition) throw new SignerFault('invariant_violation', message);
}

export function abytes(value: Uint8Array, length: number, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new SignerFault('invalid_request', `${name} must be ${length} bytes, got ${value instanceof Uint8Array ? value.length : typeof value}`);
  }
}

export function assertTransferInvariants(
  invariants: SignerInvariants,
  address: string,
  domain: Eip712Domain,
  message: TransferWithAuthorization,
  nowSeconds: number,
): void {
  const contract = domain.verifyingContract.toLowerCase();
  invariant(
    invariants.allowedTokens.some((t) => t.chainId === domain.chainId && t.address === contract),
    `token ${domain.verifyingContract} on chain ${domain.chainId} is not allowed`,
  );
  invariant(message.from.toLowerCase() === address.toLowerCase(), 'message.from must be the wallet address');
  const value = BigInt(message.value);
  invariant(value > 0n, 'value must be positive');
  invariant(value <= invariants.maxValue, `value exceeds the signer maximum of ${invariants.maxValue}`);
  const validAfter = BigInt(message.validAfter);
  const validBefore = BigInt(message.validBefore);
  const now = BigInt(nowSeconds);
  invariant(validAfter < validBefore, 'validAfter must be before validBefore');
  invariant(validBefore > now, 'validBefore is in the past');
  const start = validAfter > now ? validAfter : now;
  invariant(validBefore - start <= BigInt(invariants.maxValiditySeconds), `validity window exceeds ${invariants.maxValiditySeconds} s`);
}

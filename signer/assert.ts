/**
 * Small named assertions (noble's `abytes` style: they name the bad argument) and the static invariants
 * the signer re-checks on every signature, whatever the front decided:
 *   allowed_token   (domain.chainId, domain.verifyingContract) is on the allow-list (address case-insensitive)
 *   from_is_wallet  message.from is the wallet address the request names
 *   value_positive  0 < value
 *   value_max       value ≤ TREASURY_SIGNER_MAX_VALUE
 *   window_ordered  validAfter < validBefore
 *   window_open     validBefore > now
 *   window_max      validBefore − max(validAfter, now) ≤ TREASURY_SIGNER_MAX_VALIDITY_SECONDS
 * A violation throws `invariant_violation` with a message that starts with the rule's name. Addresses
 * must carry a correct EIP-55 checksum when mixed-case (`aaddress`, `invalid_request` otherwise).
 *
 * Protects against: a compromised or buggy front asking for a signature on another chain or token, for
 * another address, for an absurd value, or one that stays valid for months.
 * Known limits: spend policy (caps, velocity, counterparties) is the front's job, under its lock; the
 * EIP-712 domain name/version are not checked here (a wrong name only yields a useless signature).
 */
import type { Eip712Domain, TransferWithAuthorization } from './protocol/signer-protocol.js';
import type { SignerInvariants } from './config/signer-config.js';
import { getAddress } from 'viem';
import { SignerFault } from './signer-error.js';

export type InvariantRule = 'allowed_token' | 'from_is_wallet' | 'value_positive' | 'value_max' | 'window_ordered' | 'window_open' | 'window_max';

export function invariant(condition: boolean, rule: InvariantRule, message: string): asserts condition {
  if (!condition) throw new SignerFault('invariant_violation', `${rule}: ${message}`);
}

/** Asserts `value` is a Uint8Array of exactly `length` bytes, naming the argument when it is not. */
export function abytes(value: Uint8Array, length: number, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== length) {
    throw new SignerFault('invalid_request', `${name} must be ${length} bytes, got ${value instanceof Uint8Array ? value.length : typeof value}`);
  }
}

/**
 * Asserts a 0x-prefixed 40-hex address (already schema-checked) carries a correct EIP-55 checksum when it
 * is mixed-case; all-lower and all-upper spellings carry none and are accepted.
 */
export function aaddress(value: string, name: string): void {
  const hex = value.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return;
  if (getAddress(value) !== value) throw new SignerFault('invalid_request', `${name} has a wrong EIP-55 checksum`);
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
    'allowed_token',
    `token ${domain.verifyingContract} on chain ${domain.chainId} is not allowed`,
  );
  invariant(message.from.toLowerCase() === address.toLowerCase(), 'from_is_wallet', 'message.from must be the wallet address');
  const value = BigInt(message.value);
  invariant(value > 0n, 'value_positive', 'value must be positive');
  invariant(value <= invariants.maxValue, 'value_max', `value exceeds the signer maximum of ${invariants.maxValue}`);
  const validAfter = BigInt(message.validAfter);
  const validBefore = BigInt(message.validBefore);
  const now = BigInt(nowSeconds);
  invariant(validAfter < validBefore, 'window_ordered', 'validAfter must be before validBefore');
  invariant(validBefore > now, 'window_open', 'validBefore is in the past');
  const start = validAfter > now ? validAfter : now;
  invariant(validBefore - start <= BigInt(invariants.maxValiditySeconds), 'window_max', `validity window exceeds ${invariants.maxValiditySeconds} s`);
}

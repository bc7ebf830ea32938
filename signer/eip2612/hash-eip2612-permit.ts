/**
 * The EIP-712 digest of an EIP-2612 `Permit(owner, spender, value, nonce, deadline)` on a token's own domain
 * (USDC: FiatTokenV2 implements EIP-2612), computed by the signer itself from the structured domain and
 * message with viem's EIP-712 struct hashing (memoised domain separator, as for EIP-3009) — never
 * hand-rolled. This is the permit the x402 `eip2612GasSponsoring` extension carries: the token lets
 * Permit2 move `value` of the owner's tokens, so a wallet that cannot send an `approve` transaction
 * (the signer signs no transactions) can still pay `upto` through the x402 upto proxy, which submits the
 * permit before the Permit2 transfer.
 *
 * Protects against: signing a digest chosen by the caller (there is no such path). Which spender may be
 * named is assert.ts's job (Permit2 only).
 * Known limits: a wrong domain name/version or nonce yields a signature the token rejects, not a loss.
 */
import { bytesToHex, hexToBytes, type Hex } from 'viem';
import { hashStruct } from 'viem/utils';
import { typedDataDigest } from '../eip3009/hash-transfer-authorization.js';
import type { Eip2612Permit, Eip712Domain } from '../protocol/signer-protocol.js';

export const EIP2612_PERMIT_TYPES = {
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
} as const;

/** Addresses enter EIP-712 as uint160, so case is irrelevant; lower-case keeps viem's checksum check quiet. */
const lower = (address: string) => address.toLowerCase() as Hex;

/** The digest as 32 bytes, as the backend signs it. */
export function eip2612PermitDigest(domain: Eip712Domain, message: Eip2612Permit): Uint8Array {
  const struct = hashStruct({
    types: EIP2612_PERMIT_TYPES,
    primaryType: 'Permit',
    data: {
      owner: lower(message.owner),
      spender: lower(message.spender),
      value: BigInt(message.value),
      nonce: BigInt(message.nonce),
      deadline: BigInt(message.deadline),
    },
  });
  return typedDataDigest(domain, hexToBytes(struct));
}

/** The digest as 0x hex. */
export function hashEip2612Permit(domain: Eip712Domain, message: Eip2612Permit): Hex {
  return bytesToHex(eip2612PermitDigest(domain, message));
}

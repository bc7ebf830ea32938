/**
 * The EIP-712 digest of an EIP-3009 TransferWithAuthorization, computed by the signer itself from the
 * structured domain and message with viem's hashTypedData — never hand-rolled. Checked against the x402
 * specification's vector (test/vectors/eip3009-x402-spec-vector.json).
 *
 * Protects against: signing a digest chosen by the caller — there is no path by which one is supplied.
 * Addresses are hashed case-insensitively (EIP-55 checksums are checked before, in assert.ts).
 * Known limits: the domain name/version come from the request (Base "USD Coin", Base Sepolia "USDC");
 * a wrong one yields a signature the token contract rejects, not a loss.
 */
import { hashTypedData, type Hex } from 'viem';
import type { Eip712Domain, TransferWithAuthorization } from '../protocol/signer-protocol.js';

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** Addresses enter EIP-712 as uint160, so case is irrelevant; lower-case keeps viem's checksum check quiet. */
const lower = (address: string) => address.toLowerCase() as Hex;

export function hashTransferAuthorization(domain: Eip712Domain, message: TransferWithAuthorization): Hex {
  return hashTypedData({
    domain: { name: domain.name, version: domain.version, chainId: domain.chainId, verifyingContract: lower(domain.verifyingContract) },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: lower(message.from),
      to: lower(message.to),
      value: BigInt(message.value),
      validAfter: BigInt(message.validAfter),
      validBefore: BigInt(message.validBefore),
      nonce: message.nonce as Hex,
    },
  });
}

/**
 * The EIP-712 digest of an EIP-3009 TransferWithAuthorization, computed by the signer itself from the
 * structured domain and message (viem's hashTypedData — never hand-rolled). There is no path by which a
 * caller supplies the digest.
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

export function hashTransferAuthorization(domain: Eip712Domain, message: TransferWithAuthorization): Hex {
  return hashTypedData({
    domain: { name: domain.name, version: domain.version, chainId: domain.chainId, verifyingContract: domain.verifyingContract as Hex },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: message.from as Hex,
      to: message.to as Hex,
      value: BigInt(message.value),
      validAfter: BigInt(message.validAfter),
      validBefore: BigInt(message.validBefore),
      nonce: message.nonce as Hex,
    },
  });
}

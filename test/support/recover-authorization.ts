/**
 * Recovers the address that signed an EIP-3009 TransferWithAuthorization as the API returns it (decimal
 * strings, hex nonce), for the tests that prove a payment's signature is the wallet's. It checks nothing
 * itself: the caller compares the address it returns with the wallet's.
 */
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../signer/eip3009/hash-transfer-authorization.js';
import { BASE_SEPOLIA_USDC } from '../builders/payment-requirements.js';
import type { Eip3009Authorization } from '../../src/api/pay/payment-authorization.js';

/** Base Sepolia's USDC domain, the one the test chain registry names. */
export const BASE_SEPOLIA_USDC_DOMAIN = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: BASE_SEPOLIA_USDC,
} as const;

export function recoverAuthorizationSigner(
  authorization: Eip3009Authorization,
  signature: string,
  domain: { name: string; version: string; chainId: number; verifyingContract: string } = BASE_SEPOLIA_USDC_DOMAIN,
): Promise<Address> {
  return recoverTypedDataAddress({
    domain: { ...domain, verifyingContract: domain.verifyingContract as Address },
    types: TRANSFER_WITH_AUTHORIZATION_TYPES,
    primaryType: 'TransferWithAuthorization',
    message: {
      from: authorization.from as Address,
      to: authorization.to as Address,
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as Hex,
    },
    signature: signature as Hex,
  });
}

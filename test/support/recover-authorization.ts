/**
 * Recovers the address that signed an EIP-3009 TransferWithAuthorization as the API returns it (decimal
 * strings, hex nonce), for the tests that prove a payment's signature is the wallet's. It checks nothing
 * itself: the caller compares the address it returns with the wallet's. The type is the tests' own
 * (typed-data-oracle.ts, from EIP-3009), not the signer's.
 */
import { recoverTypedDataAddress, type Address, type Hex } from 'viem';
import { BASE_SEPOLIA_USDC } from '../builders/payment-requirements.js';
import { TRANSFER_WITH_AUTHORIZATION, typedData, type TokenDomain } from './typed-data-oracle.js';
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
  domain: TokenDomain = BASE_SEPOLIA_USDC_DOMAIN,
): Promise<Address> {
  return recoverTypedDataAddress({
    ...typedData(TRANSFER_WITH_AUTHORIZATION, domain, { ...authorization }),
    signature: signature as Hex,
  });
}

/**
 * What the signer service's unit tests build it with: a USDC domain on Base Sepolia, a payee, the static invariants
 * that allow that token (each test overrides what it is about), and a parsed `sign_transfer_authorization` request.
 */
import type { SignerInvariants } from '../../signer/config/signer-config.js';
import { DEFAULT_SOLANA_INVARIANTS } from '../../signer/config/solana-invariants.js';
import { signerRequestSchema, type SignerRequest } from '../../signer/protocol/signer-protocol.js';

export const TEST_USDC_DOMAIN = {
  name: 'USDC',
  version: '2',
  chainId: 84532,
  verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
} as const;

export const TEST_PAYEE = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

/** The invariants allowing TEST_USDC_DOMAIN's token, at most 1 USDC a signature, an hour's validity. */
export function testSignerInvariants(overrides: Partial<SignerInvariants> = {}): SignerInvariants {
  return {
    allowedTokens: [{ chainId: TEST_USDC_DOMAIN.chainId, address: TEST_USDC_DOMAIN.verifyingContract.toLowerCase() }],
    maxValue: 1_000_000n,
    maxValiditySeconds: 3600,
    permit2: '0x000000000022d473030f116ddee9f6b43ac78ba3',
    permit2Spenders: [],
    solana: DEFAULT_SOLANA_INVARIANTS,
    ...overrides,
  };
}

/** A `sign_transfer_authorization` of 0.001 USDC from `wallet` to TEST_PAYEE, valid for ten minutes, as parsed. */
export function transferAuthorizationRequest(
  wallet: { accountKeyRef: string; walletKeyRef: string; address: string },
  nonce: number,
  id = String(nonce),
): SignerRequest {
  const now = Math.floor(Date.now() / 1000);
  return signerRequestSchema.parse({
    v: 1,
    id,
    method: 'sign_transfer_authorization',
    params: {
      account_key_ref: wallet.accountKeyRef,
      wallet_key_ref: wallet.walletKeyRef,
      address: wallet.address,
      domain: TEST_USDC_DOMAIN,
      message: {
        from: wallet.address,
        to: TEST_PAYEE,
        value: '1000',
        validAfter: '0',
        validBefore: String(now + 600),
        nonce: `0x${nonce.toString(16).padStart(64, '0')}`,
      },
    },
  });
}

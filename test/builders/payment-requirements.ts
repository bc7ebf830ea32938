/** Test data builder: a valid x402 `accepts` entry for Base Sepolia USDC; override any field. */
export const SELLER_ADDRESS = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

export function paymentRequirements(overrides: Record<string, unknown> = {}) {
  return {
    scheme: 'exact',
    network: 'eip155:84532',
    payTo: SELLER_ADDRESS,
    amount: '1000',
    asset: BASE_SEPOLIA_USDC,
    extra: { name: 'USDC', version: '2' },
    maxTimeoutSeconds: 60,
    ...overrides,
  };
}

/** The CAIP-2 id of Solana devnet (the offline chain's network). */
export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

/**
 * A valid Solana `exact` entry on the offline chain (ops/solana/local-solana.ts): its USDC mint and fee payer,
 * `amount` raw units (6 decimals) to `payTo`; override any field.
 */
export function solanaPaymentRequirements(
  chain: { mint: string; feePayer: string },
  amount: string,
  payTo: string,
  overrides: Record<string, unknown> = {},
) {
  return {
    scheme: 'exact',
    network: SOLANA_DEVNET,
    asset: chain.mint,
    amount,
    payTo,
    maxTimeoutSeconds: 60,
    extra: { feePayer: chain.feePayer },
    ...overrides,
  };
}

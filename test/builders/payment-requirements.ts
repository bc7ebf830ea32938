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

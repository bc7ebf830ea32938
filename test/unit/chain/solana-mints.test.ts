/**
 * The Solana networks and USDC mints Treasury serves and signs for are the ones the official x402 SVM package
 * names (`@x402/svm`: SOLANA_*_CAIP2, USDC_*_ADDRESS): the API's registry (src/shared/chain-registry.ts) and the
 * signer's known USDC mints (signer/config/solana-invariants.ts), of which it allows devnet's by default. A mint
 * spelled wrongly would make every mainnet payment fail (or, worse, sign for a token that is not USDC); this holds
 * both to the package.
 */
import assert from 'node:assert/strict';
import { SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2, USDC_DEVNET_ADDRESS, USDC_MAINNET_ADDRESS } from '@x402/svm';
import { DEFAULT_SOLANA_INVARIANTS, SOLANA_USDC_MINTS } from '../../../signer/config/solana-invariants.js';
import { SOLANA_CHAINS } from '../../../src/shared/chain-registry.js';

const OFFICIAL = new Map([
  [SOLANA_MAINNET_CAIP2, USDC_MAINNET_ADDRESS],
  [SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS],
]);

describe('Solana USDC mints match @x402/svm', () => {
  it("the API's registry", () => {
    assert.deepEqual(new Map(SOLANA_CHAINS.map((c) => [c.network, c.usdc])), OFFICIAL);
  });
  it("the signer's known mints, and its default allowed mint (devnet only)", () => {
    assert.deepEqual(new Map(Object.entries(SOLANA_USDC_MINTS)), OFFICIAL);
    assert.deepEqual(
      DEFAULT_SOLANA_INVARIANTS.allowedMints.map((m) => [m.network, m.mint]),
      [[SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS]],
    );
  });
});

/**
 * The static bounds the signer applies to every Solana message it is asked to sign (../solana/): which
 * mints may be paid on which network, and how much compute a payment may ask for. Part of the signer's
 * invariants (./signer-config.ts); no protocol message changes them.
 *
 * Defends: a front asking the wallet to pay in another token, on a network the deployment does not use,
 * or to attach an absurd priority fee or compute budget to a payment (the x402 facilitator refuses a price
 * above 5,000,000 µlamports per compute unit; the client asks for 20,000 units).
 * Does not defend: the amount (the per-signature maximum and the wallet's rolling ceilings count it, in
 * raw 6-decimal units, as for EVM tokens — hence every allowed mint must have 6 decimals, which
 * ../solana/check-x402-exact-message.ts holds each transfer to).
 * The allowed mints come from TREASURY_SIGNER_ALLOWED_TOKENS (./allowed-tokens.ts); by default USDC on devnet
 * only (`DEFAULT_SOLANA_INVARIANTS`): mainnet USDC is signed for only when named there. The compute and memo
 * bounds are fixed here; the environment does not override them.
 */

/** A mint the wallet may pay in, on one network (CAIP-2 `solana:<genesis hash prefix>`). */
export interface SolanaAllowedMint {
  network: string;
  /** base58 */
  mint: string;
}

export interface SolanaInvariants {
  allowedMints: readonly SolanaAllowedMint[];
  /** Largest SetComputeUnitLimit a payment may carry. */
  maxComputeUnitLimit: number;
  /** Largest SetComputeUnitPrice, in micro-lamports per compute unit. */
  maxComputeUnitPriceMicroLamports: bigint;
  /** Longest memo, in bytes (UTF-8). */
  maxMemoBytes: number;
}

/** The decimals every allowed mint has: the signer's amounts are raw 6-decimal units (USDC). */
export const SOLANA_MINT_DECIMALS = 6;

export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';

/** Circle's USDC mint on each network (as `@x402/svm` names them). Known mints, not an allow-list. */
export const SOLANA_USDC_MINTS: Readonly<Record<typeof SOLANA_DEVNET | typeof SOLANA_MAINNET, string>> = Object.freeze({
  [SOLANA_DEVNET]: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
  [SOLANA_MAINNET]: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
});

/** The bounds on `allowedMints`, frozen (the mints are the configuration's; the compute bounds are fixed). */
export function solanaInvariants(allowedMints: readonly SolanaAllowedMint[]): SolanaInvariants {
  return Object.freeze({
    allowedMints: Object.freeze(allowedMints.map((m) => Object.freeze({ network: m.network, mint: m.mint }))),
    // Ten times what the x402 client asks for (20,000), well under a transaction's 1,400,000.
    maxComputeUnitLimit: 200_000,
    maxComputeUnitPriceMicroLamports: 5_000_000n,
    // The x402 client's memo is 32 hex characters, or the seller's `extra.memo`.
    maxMemoBytes: 256,
  });
}

/** What a signer without TREASURY_SIGNER_ALLOWED_TOKENS allows on Solana: devnet USDC only, no mainnet mint. */
export const DEFAULT_SOLANA_INVARIANTS: SolanaInvariants = solanaInvariants([
  { network: SOLANA_DEVNET, mint: SOLANA_USDC_MINTS[SOLANA_DEVNET] },
]);

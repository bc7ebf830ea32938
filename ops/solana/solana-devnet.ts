/**
 * What the offline Solana chain presents itself as: Solana devnet. The official x402 SVM packages accept only
 * the genesis CAIP-2 ids (mainnet, devnet, testnet), so a local chain answers devnet's genesis hash and holds
 * a USDC mint at devnet's USDC address (6 decimals): `"$0.01"` prices then resolve unchanged.
 * Defends against: nothing by itself; the values are public constants.
 * Does not: make the local chain devnet; it only answers its names, on a loopback URL.
 */
import { address } from '@solana/kit';
import { SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';

/** Devnet's genesis hash (the CAIP-2 reference is its first 32 characters). */
export const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';

/** `solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1`. */
export const LOCAL_SOLANA_NETWORK = SOLANA_DEVNET_CAIP2;

/** USDC on devnet: `4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU`. */
export const LOCAL_USDC_MINT = address(USDC_DEVNET_ADDRESS);

export const USDC_DECIMALS = 6;

/** What getVersion answers: the engine it really is, not a validator version. */
export const LOCAL_SOLANA_VERSION = { 'solana-core': 'litesvm-1.4.1', 'feature-set': 0 } as const;

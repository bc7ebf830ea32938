/**
 * How the wallet pages name a wallet's network: the chain registry's name for its CAIP-2 id (`eip155:84532` →
 * base-sepolia; an id the registry does not know, as it is) and its family. Addresses are never touched here or
 * where these are used: an EVM address is shown as the API sends it, a Solana address is base58 and
 * case-sensitive (no lower-casing, no EIP-55 checksum).
 */
import { ChainRegistry, networkFamily } from '../../../src/shared/chain-registry';

const KNOWN = ChainRegistry.fromConfig(undefined, { solana: true });

export function networkName(network: string): string {
  return KNOWN.resolveAny(network)?.name ?? network;
}

export function isSolanaNetwork(network: string): boolean {
  return networkFamily(network) === 'svm';
}

/** A payee address of the wallet's family: 0x + 40 hex (EVM), or base58 of 32 to 44 characters (Solana). */
export function isPayeeAddress(network: string, address: string): boolean {
  return isSolanaNetwork(network) ? /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(address) : /^0x[0-9a-fA-F]{40}$/.test(address);
}

/** The dry-run payee of a spend probe: a burn address of the wallet's family (nothing is signed or sent). */
export function probeRecipient(network: string): string {
  return isSolanaNetwork(network)
    ? '1nc1nerator11111111111111111111111111111111'
    : '0x000000000000000000000000000000000000dEaD';
}

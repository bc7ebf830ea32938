/**
 * Addresses from a BIP39 mnemonic: Base (EVM) by BIP32/BIP44 m/44'/60'/0'/0/i (@scure/bip32, address by
 * viem) and Solana by SLIP-0010 ed25519 m/44'/501'/i'/0' (micro-key-producer), base58 (@scure/base). The
 * private keys live only inside this call; only the sign-ins (SIWE, SIWS) sign with them (then they are dropped).
 */
import { HDKey } from '@scure/bip32';
import { base58 } from '@scure/base';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import SlipHDKey from 'micro-key-producer/slip10.js';
import { toHex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { CliError } from '../../core/cli-error.js';

export function newMnemonic(words: 12 | 24 = 24): string {
  return generateMnemonic(wordlist, words === 24 ? 256 : 128);
}

export function checkMnemonic(mnemonic: string): string {
  const normalized = mnemonic.trim().toLowerCase().split(/\s+/).join(' ');
  if (!validateMnemonic(normalized, wordlist))
    throw new CliError({
      code: 'invalid_mnemonic',
      userMessage: 'That is not a valid BIP39 (English) recovery phrase.',
      exitCode: 2,
      details: { flag: 'XX_MNEMONIC' },
    });
  return normalized;
}

export function evmAccount(mnemonic: string, index = 0): PrivateKeyAccount {
  const key = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/60'/0'/0/${index}`);
  if (!key.privateKey) throw new Error('derivation produced no private key');
  return privateKeyToAccount(toHex(key.privateKey));
}

/** The Solana ed25519 key pair at m/44'/501'/i'/0' (SLIP-0010): the 32-byte secret and the public key. */
export function solanaKey(mnemonic: string, index = 0): { secretKey: Uint8Array; publicKey: Uint8Array } {
  const key = SlipHDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/501'/${index}'/0'`);
  return { secretKey: key.privateKey, publicKey: key.publicKeyRaw };
}

export function solanaAddress(mnemonic: string, index = 0): string {
  return base58.encode(solanaKey(mnemonic, index).publicKey);
}

export type ChainChoice = 'base' | 'solana' | 'both';

export function addressesFor(mnemonic: string, chain: ChainChoice): { base?: string; solana?: string } {
  return {
    ...(chain !== 'solana' ? { base: evmAccount(mnemonic).address } : {}),
    ...(chain !== 'base' ? { solana: solanaAddress(mnemonic) } : {}),
  };
}

/**
 * Anvil's deterministic development accounts (BIP-44 m/44'/60'/0'/0/i of the public "test … junk"
 * mnemonic). Their keys are published in Foundry's docs and are for local chains only: anything they
 * hold on a real network is taken within seconds. Roles in the sandbox: #0 deploys the test USDC and is
 * its minter (faucet), #1 is the facilitator that pays gas for settlements; tests use the others.
 */
import { mnemonicToAccount } from 'viem/accounts';
import { toHex, type Address, type Hex } from 'viem';
import { ANVIL_MNEMONIC } from './anvil-process.js';

export interface DevAccount {
  index: number;
  address: Address;
  privateKey: Hex;
}

export const MINTER_ACCOUNT_INDEX = 0;
export const FACILITATOR_ACCOUNT_INDEX = 1;

const cache = new Map<number, DevAccount>();

/** The dev account at `index` (0–9 are pre-funded by anvil with --accounts 10). */
export function anvilDevAccount(index: number): DevAccount {
  if (!Number.isInteger(index) || index < 0 || index > 1000)
    throw new RangeError(`dev account index must be an integer in 0..1000, got ${index}`);
  let account = cache.get(index);
  if (!account) {
    const hd = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
    const key = hd.getHdKey().privateKey;
    if (!key) throw new Error(`no private key derived for dev account ${index}`);
    account = Object.freeze({ index, address: hd.address, privateKey: toHex(key) });
    cache.set(index, account);
  }
  return account;
}

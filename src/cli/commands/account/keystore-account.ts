/**
 * A keystore's Base account (BIP44 m/44'/60'/0'/0/0, the address `xx init` prints) as a viem account for
 * self-custody payments (docs/cli.md, "Self-custody payments"). The passphrase is asked for once (a hidden
 * prompt on a terminal, or XX_KEYSTORE_PASSPHRASE) and kept in memory for this command; the keystore is
 * opened only when a signature is asked for, the key derived, the typed data signed, and the seed's and
 * key's bytes wiped (the phrase and the key's hex are JavaScript strings, left to the garbage collector with no
 * reference kept) — it is never stored in the account object, never written, never sent, never logged.
 *
 * Defends against: signing anything but an x402 payment (only EIP-3009 `TransferWithAuthorization` and the
 * Permit2 `PermitWitnessTransferFrom` are signed; messages and transactions are refused); a payment in another
 * token or on another chain than the chain's USDC the caller names (`unsupported_signature`, nothing signed:
 * the buyer prices amounts as USDC); a keystore whose
 * plain-text address header was edited to name another address (the derived key's address must equal it
 * before anything is signed); a wrong passphrase (`wrong_passphrase`, exit 1, nothing signed).
 * Does not defend against: malware on the machine while the command runs, or a weak passphrase
 * (seed-keystore.ts); the header's address being edited for commands that only read it (`wallet balance`,
 * `fund --self-custody` show or fund the header's address).
 */
import { HDKey } from '@scure/bip32';
import { mnemonicToSeedSync } from '@scure/bip39';
import { getAddress, toHex, type LocalAccount } from 'viem';
import { privateKeyToAccount, toAccount } from 'viem/accounts';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { readJsonFile } from '../../core/secret-file.js';
import { keystorePath, passphraseFor } from './owner-sign-in.js';
import { keystoreSchema, openMnemonic, type Keystore } from './seed-keystore.js';

const PAYMENT_TYPES = new Set(['TransferWithAuthorization', 'PermitWitnessTransferFrom']);

/** The keystore `name` (its header and sealed seed; no passphrase needed to read it). */
export function readKeystore(ctx: CliContext, name: string): Keystore {
  const keystore = readJsonFile(keystorePath(ctx, name), keystoreSchema);
  if (!keystore)
    throw new CliError({
      code: 'keystore_not_found',
      userMessage: `No keystore named "${name}"; create one with \`xx init\` or \`xx wallet generate\` (see \`xx wallet list\`).`,
      details: { keystore: name },
    });
  return keystore;
}

/** The keystore `name` and its Base address (from its header; no passphrase needed). */
export function keystoreBaseAddress(ctx: CliContext, name: string): { keystore: Keystore; address: `0x${string}` } {
  const keystore = readKeystore(ctx, name);
  const base = keystore.addresses.base;
  if (!base || !/^0x[0-9a-fA-F]{40}$/.test(base))
    throw new CliError({
      code: 'no_base_address',
      userMessage: `The keystore "${name}" has no Base address (made with --chain solana); import its phrase with \`xx wallet import\`.`,
      details: { keystore: name },
    });
  return { keystore, address: getAddress(base) };
}

function refuse(what: string): never {
  throw new CliError({
    code: 'unsupported_signature',
    userMessage: `The self-custody account signs x402 payments only, not ${what}.`,
  });
}

/** The one token the account pays in: its chain's USDC. */
export interface PaymentToken {
  network: `eip155:${number}`;
  usdc: `0x${string}`;
}

interface TypedPayment {
  primaryType: string;
  domain?: { chainId?: unknown; verifyingContract?: unknown };
  message?: { permitted?: { token?: unknown } };
}

const sameAddress = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();

/**
 * The typed data moves `token.usdc` on `token.network`: EIP-3009's domain is the token itself (its
 * `verifyingContract`); Permit2's names the token in `permitted.token`. Both domains carry the chain id.
 */
function movesUsdc(typedData: TypedPayment, token: PaymentToken): boolean {
  const chainId = typedData.domain?.chainId;
  if (chainId === undefined || `eip155:${String(chainId)}` !== token.network) return false;
  return typedData.primaryType === 'TransferWithAuthorization'
    ? sameAddress(typedData.domain?.verifyingContract, token.usdc)
    : sameAddress(typedData.message?.permitted?.token, token.usdc);
}

/** Opens the keystore, derives the Base key, runs `sign` with it, wipes the key. */
async function withBaseKey<T>(
  keystore: Keystore,
  passphrase: string,
  expected: `0x${string}`,
  sign: (account: LocalAccount) => Promise<T>,
): Promise<T> {
  const mnemonic = await openMnemonic(keystore, passphrase); // wrong_passphrase: nothing signed
  const seed = mnemonicToSeedSync(mnemonic);
  const key = HDKey.fromMasterSeed(seed).derive(`m/44'/60'/0'/0/0`);
  try {
    if (!key.privateKey) throw new Error('derivation produced no private key');
    const account = privateKeyToAccount(toHex(key.privateKey));
    if (account.address !== expected)
      throw new CliError({
        code: 'keystore_mismatch',
        userMessage: `The keystore "${keystore.name}" opens to another address than its header names; nothing was signed.`,
        details: { keystore: keystore.name, header_address: expected },
      });
    return await sign(account);
  } finally {
    key.wipePrivateData();
    seed.fill(0);
  }
}

/**
 * The keystore's Base account for `buy --self-custody`: asks for the passphrase now (unless given), opens the
 * keystore only inside each payment signature.
 */
export async function keystoreAccount(
  ctx: CliContext,
  name: string,
  knownPassphrase: string | undefined,
  usdc: PaymentToken,
): Promise<{ account: LocalAccount; address: `0x${string}` }> {
  const { keystore, address } = keystoreBaseAddress(ctx, name);
  const passphrase = knownPassphrase ?? (await passphraseFor(ctx, `Passphrase of the keystore "${name}"`));
  const account = toAccount({
    address,
    signMessage: async () => refuse('messages'),
    signTransaction: async () => refuse('transactions'),
    signTypedData: async (typedData) => {
      if (!PAYMENT_TYPES.has(String(typedData.primaryType))) refuse(`${String(typedData.primaryType)} typed data`);
      if (!movesUsdc(typedData as TypedPayment, usdc))
        refuse(`a transfer of another token than ${usdc.network}'s USDC`);
      return withBaseKey(keystore, passphrase, address, (key) =>
        key.signTypedData(typedData as Parameters<LocalAccount['signTypedData']>[0]),
      );
    },
  });
  return { account, address };
}

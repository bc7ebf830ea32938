/**
 * The two SPL Token account layouts the offline chain writes and reads directly: a mint (82 bytes) and a
 * token account (165 bytes), and the associated token account (ATA) address of an owner for a mint.
 * Defends against: reading a wrong-sized account as a token account (a length or state check refuses it).
 * Does not: check the account's owner program (callers do: the SPL Token program), nor handle Token-2022
 * extensions (the local USDC mint is a plain SPL Token mint).
 */
import { getAddressDecoder, getAddressEncoder, getProgramDerivedAddress, type Address } from '@solana/kit';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address;
export const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' as Address;
export const MINT_SIZE = 82;
export const TOKEN_ACCOUNT_SIZE = 165;
const INITIALIZED = 1;

export interface MintState {
  mintAuthority: Address | undefined;
  supply: bigint;
  decimals: number;
}

export interface TokenAccountState {
  mint: Address;
  owner: Address;
  amount: bigint;
}

function writeOptionalAddress(view: DataView, bytes: Uint8Array, offset: number, value: Address | undefined): void {
  view.setUint32(offset, value === undefined ? 0 : 1, true);
  if (value !== undefined) bytes.set(getAddressEncoder().encode(value), offset + 4);
}

export function encodeMint(state: MintState): Uint8Array {
  const bytes = new Uint8Array(MINT_SIZE);
  const view = new DataView(bytes.buffer);
  writeOptionalAddress(view, bytes, 0, state.mintAuthority);
  view.setBigUint64(36, state.supply, true);
  bytes[44] = state.decimals;
  bytes[45] = INITIALIZED;
  writeOptionalAddress(view, bytes, 46, undefined);
  return bytes;
}

export function decodeMint(data: Uint8Array): MintState {
  if (data.length !== MINT_SIZE || data[45] !== INITIALIZED) throw new Error('not an initialized SPL mint');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const hasAuthority = view.getUint32(0, true) === 1;
  return {
    mintAuthority: hasAuthority ? getAddressDecoder().decode(data.subarray(4, 36)) : undefined,
    supply: view.getBigUint64(36, true),
    decimals: data[44] ?? 0,
  };
}

/** An initialized token account with no delegate, not native, no close authority. */
export function encodeTokenAccount(state: TokenAccountState): Uint8Array {
  const bytes = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  const view = new DataView(bytes.buffer);
  bytes.set(getAddressEncoder().encode(state.mint), 0);
  bytes.set(getAddressEncoder().encode(state.owner), 32);
  view.setBigUint64(64, state.amount, true);
  bytes[108] = INITIALIZED;
  return bytes;
}

export function decodeTokenAccount(data: Uint8Array): TokenAccountState | undefined {
  if (data.length !== TOKEN_ACCOUNT_SIZE || data[108] === 0) return undefined;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  return {
    mint: getAddressDecoder().decode(data.subarray(0, 32)),
    owner: getAddressDecoder().decode(data.subarray(32, 64)),
    amount: view.getBigUint64(64, true),
  };
}

/** ATA(owner, mint) under the SPL Token program. */
export async function associatedTokenAddress(owner: Address, mint: Address): Promise<Address> {
  const encoder = getAddressEncoder();
  const [address] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [encoder.encode(owner), encoder.encode(TOKEN_PROGRAM), encoder.encode(mint)],
  });
  return address;
}

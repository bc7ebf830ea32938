/**
 * A counterparty (payee) address of either family, as the counterparty lists and their rules compare it: an
 * EVM 0x address compares case-insensitively and is shown EIP-55 checksummed; a Solana address is base58 of
 * 32 bytes and compares exactly (base58 is case-sensitive: lower-casing it would name another key).
 *
 * Defends: a base58 payee matching a list entry that differs only in case; a list entry that is not 32
 * bytes (`isSolanaAddress` decodes it). Does not defend: a payee on another family than the wallet's (the
 * pay path refuses it before the policy is asked).
 */
import { getAddress } from 'viem';

/** The spelling of a base58 Solana address: 32 to 44 characters of the Bitcoin alphabet. */
export const SOLANA_ADDRESS_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A base58 string of exactly 32 bytes (an Ed25519 public key or a program-derived address). */
export function isSolanaAddress(value: string): boolean {
  if (!SOLANA_ADDRESS_RE.test(value)) return false;
  let n = 0n;
  for (const ch of value) n = n * 58n + BigInt(BASE58_ALPHABET.indexOf(ch));
  // Each leading '1' is a zero byte; the rest is the number's big-endian bytes.
  const zeros = value.length - value.replace(/^1+/, '').length;
  const bytes = n === 0n ? 0 : Math.ceil(n.toString(16).length / 2);
  return zeros + bytes === 32;
}

/** How lists hold and rules compare an address: EVM lower-cased, base58 as it is. */
export function counterpartyKey(address: string): string {
  return address.startsWith('0x') ? address.toLowerCase() : address;
}

/** How an address is stored and reported: EVM EIP-55 checksummed, base58 as it is. */
export function displayCounterparty(address: string): string {
  return address.startsWith('0x') ? getAddress(address.toLowerCase()) : address;
}

/** Solana's all-zero key in base58 (the system program's id): no wallet holds it, so no payment can reach it. */
export const SOLANA_ZERO_ADDRESS = '11111111111111111111111111111111';

/**
 * The text of a signer's policy receipt, built and read in one place: the signer writes it
 * (signer/owner-policy/policy-receipt-statement.ts) and the wallet's key signs it — an EVM wallet's as an EIP-191
 * personal message, a Solana wallet's inside a Solana off-chain message (./policy-receipt-offchain-message.ts); the
 * CLI reads it back (src/cli/commands/account/policy-receipt-check.ts). Eight lines, a fixed first line and
 * `key: value` lines in a fixed order:
 *
 *   Treasury signer policy receipt v1
 *   wallet: 0x… (EIP-55) | <base58 Solana address, as given>
 *   version: <n> | none
 *   policy_hash: 0x<64 hex> | none
 *   issued_at: <unix seconds> | none
 *   authority: <owner|approver|first_signer> <address|none> | none
 *   signer_time: <unix seconds>
 *   nonce: <64 hex>
 *
 * Defends: the builder and the reader drifting apart (a receipt the signer issues that the owner's check cannot read,
 * or reads differently); a text that only looks like a receipt (strict line-by-line reading, fixed patterns, every
 * number bounded, a policy stated whole or not at all). The format is frozen: receipts already issued must still read.
 */
import { getAddress } from 'viem';

export const POLICY_RECEIPT_HEADER = 'Treasury signer policy receipt v1';
const MAX_TEXT = 1024;
const MAX_VERSION = 2 ** 48;
const MAX_SECONDS = 253_402_300_799;

export interface ReceiptAuthority {
  kind: 'owner' | 'approver' | 'first_signer';
  address: string | null;
}

/** What a receipt states. */
export interface ReceiptFacts {
  wallet: string;
  version: number | null;
  policy_hash: string | null;
  issued_at: number | null;
  authority: ReceiptAuthority | null;
  signer_time: number;
  nonce: string;
}

const KEYS = ['wallet', 'version', 'policy_hash', 'issued_at', 'authority', 'signer_time', 'nonce'] as const;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;
const HASH = /^0x[0-9a-f]{64}$/;
const NONCE = /^[0-9a-f]{64}$/;

/** An EVM address in its EIP-55 form; a Solana address (base58) as the store keeps it. */
function addressText(address: string): string {
  return address.startsWith('0x') ? getAddress(address) : address;
}

/** An authority's address as `addressText` writes it; none for an unnamed approver. */
function authorityAddress(address: string | null): string {
  return address === null ? 'none' : addressText(address);
}

function noneOr(value: number | string | null): string {
  return value === null ? 'none' : String(value);
}

/**
 * The statement's text: the same facts always give the same text (an EVM wallet in EIP-55, a Solana wallet's base58
 * as given, the hash lower-case).
 */
export function buildPolicyReceiptStatement(facts: ReceiptFacts): string {
  const { authority } = facts;
  return [
    POLICY_RECEIPT_HEADER,
    `wallet: ${addressText(facts.wallet)}`,
    `version: ${noneOr(facts.version)}`,
    `policy_hash: ${noneOr(facts.policy_hash === null ? null : facts.policy_hash.toLowerCase())}`,
    `issued_at: ${noneOr(facts.issued_at)}`,
    `authority: ${authority ? `${authority.kind} ${authorityAddress(authority.address)}` : 'none'}`,
    `signer_time: ${String(facts.signer_time)}`,
    `nonce: ${facts.nonce}`,
  ].join('\n');
}

/** A bounded decimal, or null for `none` (when allowed); undefined when malformed. */
function decimal(value: string, max: number, noneAllowed: boolean): number | null | undefined {
  if (noneAllowed && value === 'none') return null;
  if (!DECIMAL.test(value)) return undefined;
  const n = Number(value);
  return n <= max ? n : undefined;
}

function authorityOf(value: string): ReceiptAuthority | null | undefined {
  if (value === 'none') return null;
  const [kind, address, ...rest] = value.split(' ');
  if (rest.length > 0 || (kind !== 'owner' && kind !== 'approver' && kind !== 'first_signer')) return undefined;
  if (address === 'none') return { kind, address: null };
  if (address === undefined || !(EVM_ADDRESS.test(address) || BASE58_ADDRESS.test(address))) return undefined;
  return { kind, address };
}

/** The facts of a receipt's text, read strictly; undefined when it is not exactly a receipt. */
export function parsePolicyReceiptStatement(text: string): ReceiptFacts | undefined {
  if (text.length > MAX_TEXT) return undefined;
  const lines = text.split('\n');
  if (lines.length !== KEYS.length + 1 || lines[0] !== POLICY_RECEIPT_HEADER) return undefined;
  const values: string[] = [];
  for (const [i, key] of KEYS.entries()) {
    const line = lines[i + 1]!;
    if (!line.startsWith(`${key}: `)) return undefined;
    values.push(line.slice(key.length + 2));
  }
  const [wallet, versionText, hashText, issuedText, authorityText, timeText, nonce] = values as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const version = decimal(versionText, MAX_VERSION, true);
  const policy_hash = hashText === 'none' ? null : HASH.test(hashText) ? hashText : undefined;
  const issued_at = decimal(issuedText, MAX_SECONDS, true);
  const authority = authorityOf(authorityText);
  const signer_time = decimal(timeText, MAX_SECONDS, false);
  if (!(EVM_ADDRESS.test(wallet) || BASE58_ADDRESS.test(wallet)) || !NONCE.test(nonce)) return undefined;
  if (version === undefined || policy_hash === undefined || issued_at === undefined) return undefined;
  if (authority === undefined || signer_time === undefined || signer_time === null) return undefined;
  // A policy is stated whole or not at all.
  const stated = [version, policy_hash, issued_at].filter((v) => v !== null).length;
  if (stated !== 0 && stated !== 3) return undefined;
  return { wallet, version, policy_hash, issued_at, authority, signer_time, nonce };
}

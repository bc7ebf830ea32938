/**
 * What a Solana `exact` payment's transaction says, read by the seller before it asks the facilitator: the one
 * SPL `TransferChecked` (Token or Token-2022) must move exactly the route's amount of the route's mint to the
 * seller's associated token account; its authority is the payer. The replay key is the SHA-256 of the message
 * bytes (what every signer commits to: the fee-payer slot the facilitator fills cannot change it).
 *
 * Defends against: a transaction paying another account, another mint or another amount being sent to the
 * facilitator as a payment for this route (cheap, and it does not trust the facilitator to have compared);
 * the same transaction with a different fee-payer signature slipping past the in-process replay guard.
 * Does not defend against: forged signatures, compute-budget or fee-payer abuse, an unknown blockhash (the
 * facilitator verifies and simulates; the chain refuses a transaction twice).
 */
import { createHash } from 'node:crypto';
import {
  getAddressEncoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Address,
} from '@solana/kit';

/** The SPL Token and Token-2022 programs, the two an `exact` payment's TransferChecked may name. */
export const TOKEN_PROGRAMS: readonly Address[] = [
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' as Address,
  'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as Address,
];
const ASSOCIATED_TOKEN_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' as Address;
const TRANSFER_CHECKED = 12;

/** The associated token account of (owner, mint) under one token program: the ATA program's PDA of its seeds. */
export async function associatedTokenAccount(owner: string, mint: string, program: Address): Promise<Address> {
  const encoder = getAddressEncoder();
  const [pda] = await getProgramDerivedAddress({
    programAddress: ASSOCIATED_TOKEN_PROGRAM,
    seeds: [encoder.encode(owner as Address), encoder.encode(program), encoder.encode(mint as Address)],
  });
  return pda;
}

/** The associated token accounts of (owner, mint) under SPL Token and Token-2022: where an `exact` payment goes. */
export async function associatedTokenAccounts(owner: string, mint: string): Promise<string[]> {
  const out: string[] = [];
  for (const program of TOKEN_PROGRAMS) out.push(await associatedTokenAccount(owner, mint, program));
  return out;
}

export type SvmTransfer =
  | { kind: 'ok'; payer: string; messageHash: string }
  | {
      kind: 'mismatch';
      reason:
        | 'transaction_undecodable'
        | 'transfer_not_found'
        | 'asset_mismatch'
        | 'authorization_recipient_mismatch'
        | 'authorization_value_mismatch';
    };

interface Expected {
  asset: string;
  amount: string;
  /** The seller's associated token accounts for the asset (./svm-payment.ts `associatedTokenAccounts`). */
  destinations: readonly string[];
}

function decode(base64: string) {
  const wire = getBase64Encoder().encode(base64);
  const tx = getTransactionDecoder().decode(wire);
  const message = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  return { tx, message };
}

/** Checks the payment's transaction against the route's Solana terms (see the header). */
export function readSvmTransfer(base64: string, expected: Expected): SvmTransfer {
  let decoded: ReturnType<typeof decode>;
  try {
    decoded = decode(base64);
  } catch {
    return { kind: 'mismatch', reason: 'transaction_undecodable' };
  }
  const { tx, message } = decoded;
  const keys = message.staticAccounts;
  const transfers = message.instructions.filter(
    (ix) =>
      (TOKEN_PROGRAMS as readonly string[]).includes(keys[ix.programAddressIndex] ?? '') &&
      ix.data?.[0] === TRANSFER_CHECKED,
  );
  const ix = transfers[0];
  if (transfers.length !== 1 || !ix?.data || ix.data.length !== 10 || ix.accountIndices?.length !== 4)
    return { kind: 'mismatch', reason: 'transfer_not_found' };
  const [, mintAt, destinationAt, authorityAt] = ix.accountIndices;
  const [mint, destination, authority] = [keys[mintAt!], keys[destinationAt!], keys[authorityAt!]];
  if (mint === undefined || destination === undefined || authority === undefined)
    return { kind: 'mismatch', reason: 'transfer_not_found' };
  if (mint !== expected.asset) return { kind: 'mismatch', reason: 'asset_mismatch' };
  if (!expected.destinations.includes(destination))
    return { kind: 'mismatch', reason: 'authorization_recipient_mismatch' };
  const amount = Buffer.from(ix.data.subarray(1, 9)).readBigUInt64LE(0);
  if (amount.toString() !== expected.amount) return { kind: 'mismatch', reason: 'authorization_value_mismatch' };
  const messageHash = createHash('sha256').update(Uint8Array.from(tx.messageBytes)).digest('hex');
  return { kind: 'ok', payer: authority, messageHash };
}

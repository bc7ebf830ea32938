/**
 * The pay-to addresses a seller proved: an address counts as the seller's (transfers to it can become the
 * seller's verified revenue, ./ledger-verifier.ts) only once the address itself signed payToClaimMessage —
 * an EVM address by EIP-191, a Solana (base58) address by Ed25519 over the message's UTF-8 bytes (what a
 * Solana wallet's `signMessage` signs). Proving an address makes the seller's rows that waited for one due for
 * verification again, and reopens its rows rejected for paying an address not proven yet, within the seller's
 * pending cap (./ledger/ledger-pending-cap.ts).
 *
 * Defends: one seller claiming another's address (only the key holder can sign the claim, and the claim
 * names the seller); a Solana address nobody holds the key of (a small-order public key, such as the all-zero
 * address, verifies a signature anyone can make under lenient ZIP-215 rules: the proof is verified strictly,
 * ../../shared/verify-ed25519-strict.ts); a Solana address claimed in another letter case (base58 is
 * case-sensitive: the message and the stored address keep the case given, and the signature is checked against
 * those exact bytes); proofs used to pass the pending cap (rows rejected as `recipient_mismatch` no longer count
 * toward it, and reopening them all at once would put any number of them back in the verifier's queue).
 * Does not defend: a seller proving an address it controls that another seller's buyers also pay (each
 * transfer still backs at most one verified row); proofs racing reports of the same seller (counted without a
 * lock, as the report path counts).
 */
import { getAddressEncoder, getBase58Encoder, type Address } from '@solana/kit';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { AppError } from '../errors/app-error.js';
import type { LedgerPendingCap } from './ledger/ledger-pending-cap.js';
import type { LedgerVerifier } from './ledger/ledger-verifier.js';
import type { SellerRow } from './seller-views.js';
import type { PayToStore } from './store/ledger-stores.js';
import type { PayToList } from '../../shared/api-responses/seller-ledger-responses.js';
import { verifyEd25519Strict } from '../../shared/verify-ed25519-strict.js';

/** What a seller's pay-to address signs (EIP-191) to prove payments to it belong to this seller. */
export function payToClaimMessage(sellerId: string, address: string): string {
  const spelled = isEvmAddress(address) ? address.toLowerCase() : address;
  return `Treasury: payments to ${spelled} are revenue of seller ${sellerId}.`;
}

const isEvmAddress = (address: string) => address.startsWith('0x');

/**
 * Whether `signature` (base58, 64 bytes) is the Solana `address`'s Ed25519 signature of `message`, verified
 * strictly (../../shared/verify-ed25519-strict.ts: an address of small order, which anyone can "sign" for, proves
 * nothing).
 */
function solanaSigned(address: string, message: string, signature: string): boolean {
  try {
    const publicKey = new Uint8Array(getAddressEncoder().encode(address as Address));
    const sig = new Uint8Array(getBase58Encoder().encode(signature));
    return verifyEd25519Strict(sig, new TextEncoder().encode(message), publicKey);
  } catch {
    return false;
  }
}

/** The address as stored (EVM lower-case, Solana as given) if `signature` proves the claim, else undefined. */
async function provenAddress(sellerId: string, input: { address: string; signature: string }) {
  if (!isEvmAddress(input.address))
    return solanaSigned(input.address, payToClaimMessage(sellerId, input.address), input.signature)
      ? input.address
      : undefined;
  const address = getAddress(input.address.toLowerCase());
  const valid = await verifyMessage({
    address,
    message: payToClaimMessage(sellerId, address),
    signature: input.signature as Hex,
  }).catch(() => false);
  return valid ? address.toLowerCase() : undefined;
}

/** An address as the API shows it: EVM checksummed, Solana as stored. */
const shown = (address: string) => (isEvmAddress(address) ? getAddress(address.trim()) : address.trim());

/** What the pay-to service is given (wired once in ./sellers-wing.ts). */
export interface SellerPayToDeps {
  store: PayToStore;
  clock: () => Date;
  /** The per-seller pending cap: rows a new proof reopens stay within it (./ledger/ledger-pending-cap.ts). */
  pendingCap: Pick<LedgerPendingCap, 'maxPending' | 'maxPendingPerAccount'>;
  /** Told when rows become due for verification (absent: they wait for the next sweep). */
  ledgerVerifier?: Pick<LedgerVerifier, 'nudge'> | undefined;
}

export class SellerPayToService {
  private readonly store: PayToStore;
  private readonly clock: () => Date;
  private readonly pendingCap: SellerPayToDeps['pendingCap'];
  private readonly ledgerVerifier: SellerPayToDeps['ledgerVerifier'];

  constructor(deps: SellerPayToDeps) {
    ({ store: this.store, clock: this.clock, pendingCap: this.pendingCap, ledgerVerifier: this.ledgerVerifier } = deps);
  }

  /**
   * Adds `address` to the seller's pay-to addresses, proven by its signature of payToClaimMessage: only
   * the key holder can make transfers to it count as this seller's revenue. The seller's pending rows that
   * waited for a pay-to address become due for verification, and its rows rejected for paying an address it had
   * not proved are checked again — newest first, as many as its pending cap leaves room for (the rest stay
   * rejected; proving an address again, once room came back, reopens more). Answers every address of the seller.
   */
  async registerPayTo(seller: SellerRow, input: { address: string; signature: string }): Promise<PayToList> {
    const address = await provenAddress(seller.id, input);
    if (address === undefined)
      throw new AppError('pay_to_signature_invalid', {
        fields: { address: input.address, message: payToClaimMessage(seller.id, input.address) },
      });
    const now = this.clock();
    const signature = isEvmAddress(address) ? input.signature.toLowerCase() : input.signature;
    await this.store.add(seller.id, address, signature, now);
    // Rows waiting for a pay-to, and rows that paid an address the seller had not proved yet, are checked (again):
    // the latter within the pending cap, or rejected rows would be a way past it (each one an RPC read).
    await this.store.recheckForPayTo(seller.id, now, {
      perSeller: this.pendingCap.maxPending,
      perAccount: this.pendingCap.maxPendingPerAccount,
    });
    this.ledgerVerifier?.nudge();
    return this.payTo(seller);
  }

  /** The seller's proven pay-to addresses, oldest first. */
  async payTo(seller: SellerRow): Promise<PayToList> {
    const rows = await this.store.listOf(seller.id);
    return {
      seller_id: seller.id,
      pay_to: rows.map((r) => ({ address: shown(r.address), created_at: r.created_at.toISOString() })),
    };
  }
}

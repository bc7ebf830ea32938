/**
 * The pay-to addresses a seller proved: an address counts as the seller's (transfers to it can become the
 * seller's verified revenue, ./ledger-verifier.ts) only once the address itself signed payToClaimMessage
 * (EIP-191). Proving an address makes the seller's rows that waited for one due for verification again.
 *
 * Defends: one seller claiming another's address (only the key holder can sign the claim, and the claim
 * names the seller).
 * Does not defend: a seller proving an address it controls that another seller's buyers also pay (each
 * transfer still backs at most one verified row).
 */
import { getAddress, verifyMessage, type Hex } from 'viem';
import { AppError } from '../errors/app-error.js';
import type { LedgerVerifier } from './ledger/ledger-verifier.js';
import type { SellerRow } from './seller-views.js';
import type { PayToStore } from './store/ledger-stores.js';
import type { PayToList } from '../../shared/api-responses/seller-ledger-responses.js';

/** What a seller's pay-to address signs (EIP-191) to prove payments to it belong to this seller. */
export function payToClaimMessage(sellerId: string, address: string): string {
  return `Treasury: payments to ${address.toLowerCase()} are revenue of seller ${sellerId}.`;
}

export class SellerPayToService {
  constructor(
    private readonly store: PayToStore,
    private readonly clock: () => Date,
    /** Told when rows become due for verification (absent: they wait for the next sweep). */
    private readonly ledgerVerifier?: Pick<LedgerVerifier, 'nudge'>,
  ) {}

  /**
   * Adds `address` to the seller's pay-to addresses, proven by its EIP-191 signature of payToClaimMessage: only
   * the key holder can make transfers to it count as this seller's revenue. The seller's pending rows that
   * waited for a pay-to address become due for verification. Answers every address of the seller.
   */
  async registerPayTo(seller: SellerRow, input: { address: string; signature: string }): Promise<PayToList> {
    const address = getAddress(input.address.toLowerCase());
    const valid = await verifyMessage({
      address,
      message: payToClaimMessage(seller.id, address),
      signature: input.signature as Hex,
    }).catch(() => false);
    if (!valid)
      throw new AppError('pay_to_signature_invalid', {
        fields: { address, message: payToClaimMessage(seller.id, address) },
      });
    const now = this.clock();
    await this.store.add(seller.id, address.toLowerCase(), input.signature.toLowerCase(), now);
    // Rows waiting for a pay-to, and rows that paid an address the seller had not proved yet, are checked (again).
    await this.store.recheckForPayTo(seller.id, now);
    this.ledgerVerifier?.nudge();
    return this.payTo(seller);
  }

  /** The seller's proven pay-to addresses, oldest first. */
  async payTo(seller: SellerRow): Promise<PayToList> {
    const rows = await this.store.listOf(seller.id);
    return {
      seller_id: seller.id,
      pay_to: rows.map((r) => ({ address: getAddress(r.address.trim()), created_at: r.created_at.toISOString() })),
    };
  }
}

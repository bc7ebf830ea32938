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
import type { Knex } from 'knex';
import { getAddress, verifyMessage, type Hex } from 'viem';
import { AppError } from '../errors/app-error.js';
import type { LedgerVerifier } from './ledger/ledger-verifier.js';
import type { SellerRow } from './seller-views.js';
import type { PayToList } from '../../shared/api-responses/seller-ledger-responses.js';

/** What a seller's pay-to address signs (EIP-191) to prove payments to it belong to this seller. */
export function payToClaimMessage(sellerId: string, address: string): string {
  return `Treasury: payments to ${address.toLowerCase()} are revenue of seller ${sellerId}.`;
}

export class SellerPayToService {
  constructor(
    private readonly knex: Knex,
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
    await this.knex('sellers_pay_to')
      .insert({
        seller_id: seller.id,
        address: address.toLowerCase(),
        signature: input.signature.toLowerCase(),
        created_at: now,
      })
      .onConflict(['seller_id', 'address'])
      .ignore();
    // Rows waiting for a pay-to, and rows that paid an address the seller had not proved yet, are checked (again).
    await this.knex('ledger_entries')
      .where({ seller_id: seller.id })
      .andWhere((q) =>
        q
          .where({ status: 'pending', reason: 'pay_to_not_registered' })
          .orWhere({ status: 'rejected', reason: 'recipient_mismatch' }),
      )
      .update({ status: 'pending', reason: 'awaiting_verification', next_check_at: now });
    this.ledgerVerifier?.nudge();
    return this.payTo(seller);
  }

  /** The seller's proven pay-to addresses, oldest first. */
  async payTo(seller: SellerRow): Promise<PayToList> {
    const rows = (await this.knex('sellers_pay_to')
      .where({ seller_id: seller.id })
      .orderBy([{ column: 'created_at' }, { column: 'address' }])
      .select('address', 'created_at')) as Array<{ address: string; created_at: Date }>;
    return {
      seller_id: seller.id,
      pay_to: rows.map((r) => ({ address: getAddress(r.address.trim()), created_at: r.created_at.toISOString() })),
    };
  }
}

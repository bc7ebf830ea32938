/**
 * How a payout moves money: the seller's collection wallet "pays" the seller's proven pay-to address an EIP-3009
 * transferWithAuthorization of the network's USDC through the normal pay path (src/api/pay/pay-service.ts),
 * relying on all that path enforces (the wallet's policy, the signer's own limits, the order of
 * docs/adr/0006-optimistic-reservations.md); the configured facilitator submits it on chain and answers the
 * transaction. The payout's id is the pay path's Idempotency-Key, so signing a payout again (a
 * retried flush) answers the same authorization, never a second nonce.
 *
 * Defends: a payout signed outside the collection wallet's policy and audit chain; two authorizations for one
 * payout. Does not defend: a facilitator that lies about a settlement (the payout service reads the chain
 * before it gives anything back, ./seller-payouts.ts).
 */
import { getAddress } from 'viem';
import type { ChainInfo } from '../../../shared/chain-registry.js';
import type { FacilitatorClient, SettleOutcome } from '../../../x402/facilitator-client.js';
import type { PayService } from '../../pay/pay-service.js';
import type { PaymentRequirements } from '../../pay/pay-schemas.js';
import type { PaymentAuthorization } from '../../pay/payment-authorization.js';
import { PLATFORM_ACTOR } from './platform-wallets.js';

/** How long a payout's authorization stays valid (s): a retried flush within it settles the same one. */
export const PAYOUT_VALIDITY_SECONDS = 3600;

export interface PayoutOrder {
  id: string;
  account_id: string;
  wallet_id: string;
  pay_to: string;
  amount_micro: bigint;
}

export class PayoutRail {
  constructor(
    private readonly pay: Pick<PayService, 'pay'>,
    private readonly facilitator: Pick<FacilitatorClient, 'settle'>,
  ) {}

  /** What the payout is, as an x402 `exact` requirement of the network's USDC. */
  requirements(chain: ChainInfo, order: PayoutOrder): PaymentRequirements {
    return {
      scheme: 'exact',
      network: chain.network,
      payTo: getAddress(order.pay_to.toLowerCase()),
      amount: order.amount_micro.toString(),
      asset: chain.usdc,
      extra: { name: chain.usdcName, version: chain.usdcVersion },
      maxTimeoutSeconds: PAYOUT_VALIDITY_SECONDS,
      resource: `treasury:payout/${order.id}`,
    };
  }

  /** The collection wallet's signed authorization for the payout (the same one for every call with the same order). */
  async sign(chain: ChainInfo, order: PayoutOrder): Promise<PaymentAuthorization> {
    const requirements = this.requirements(chain, order);
    return this.pay.pay(
      {
        accountId: order.account_id,
        walletId: order.wallet_id,
        actor: PLATFORM_ACTOR,
        idempotencyKey: `payout:${order.id}`,
        request: { payout_id: order.id, requirements },
      },
      requirements,
      undefined,
    );
  }

  /** Hands the signed authorization to the facilitator, which submits it on chain. */
  settle(chain: ChainInfo, order: PayoutOrder, payment: PaymentAuthorization): Promise<SettleOutcome> {
    const requirements = this.requirements(chain, order);
    // Payouts are paid on EVM chains only (`chain` is an EVM chain): a Solana payment cannot come back here.
    if ('solana_transfer' in payment) throw new Error('a payout is an EVM payment');
    const payload =
      payment.scheme === 'upto'
        ? { signature: payment.signature, permit2Authorization: payment.permit2_authorization }
        : { signature: payment.signature, authorization: payment.authorization };
    return this.facilitator.settle({
      x402Version: 2,
      paymentPayload: {
        x402Version: 2,
        resource: { url: requirements.resource ?? '', description: 'Treasury seller payout', mimeType: '' },
        accepted: requirements,
        payload,
      },
      paymentRequirements: requirements,
    });
  }
}

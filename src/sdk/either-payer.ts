/**
 * One payer over the keys a self-custody buyer holds: the EVM payer (a viem account) signs `eip155:` entries,
 * the Solana payer (a kit signer) `solana:` ones; the buyer's default network patterns are the union of theirs.
 * With one of the two, it is that payer.
 *
 * Defends against: an entry reaching a payer of the other family (it is routed by its network's namespace, and
 * a namespace neither holds a key for is never a candidate). Does not defend: anything a payer itself does not.
 */
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import type { BuyerPayer } from './buyer-payer.js';
import { UnsupportedSignatureError } from './sdk-errors.js';

export function eitherPayer(evm: BuyerPayer | undefined, svm: BuyerPayer | undefined): BuyerPayer {
  if (!evm || !svm) {
    const only = evm ?? svm;
    if (!only) throw new UnsupportedSignatureError('no key to pay with');
    return only;
  }
  const route = (r: PaymentRequirements): BuyerPayer => {
    if (r.network.startsWith('solana:')) return svm;
    if (r.network.startsWith('eip155:')) return evm;
    throw new UnsupportedSignatureError(`network ${r.network}`);
  };
  return {
    networks: Object.freeze([...evm.networks, ...svm.networks]),
    // Two keys, two networks: none is "the" wallet's; the buyer's `network` option, when given, narrows.
    network: async () => undefined,
    sign: (requirements, last, extensions, paymentId) =>
      route(requirements).sign(requirements, last, extensions, paymentId),
    balance: async (requirements) => {
      const payer = route(requirements);
      if (!payer.balance) throw new UnsupportedSignatureError('no balance reader');
      return payer.balance(requirements);
    },
  };
}

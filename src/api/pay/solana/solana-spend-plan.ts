/**
 * A Solana x402 `exact` payment, before anything is reserved: its `accepts` entry checked against the chain
 * and the paying wallet, and its transaction message built (./build-exact-message.ts). The result is the
 * spend plan the pay wing decides, reserves, signs and records like any other (../pay-service.ts); the
 * message's SHA-256 is the authorization's nonce, UNIQUE per sender as an EIP-3009 nonce is.
 *
 * Defends: a scheme other than `exact` (`upto` has no Solana form here); caller-proposed authorization terms
 * (the message fixes its own lifetime: nothing for them to bind); an asset other than the chain's USDC mint;
 * a wallet of another account (404) or on another network; a payee or fee payer that is the wallet itself
 * (`svm_requirements_invalid`: paying oneself, or a fee payer the signer refuses to co-sign for). The payee
 * may be any address, on the Ed25519 curve or not (its associated token account derives either way).
 * Does not defend: a payee whose token account does not exist (the facilitator's simulation refuses it);
 * nothing here reads a lock: the payment is decided on the wallet's locked snapshot later.
 */
import type { SvmChainInfo } from '../../../shared/chain-registry.js';
import { AppError } from '../../errors/app-error.js';
import type { AuthorizationTerms, PaymentRequirements } from '../pay-schemas.js';
import type { CallContext, SpendPlan } from '../pay-types.js';
import type { PaySnapshotStore } from '../store/pay-stores.js';
import type { ExactMessageBuilder } from './build-exact-message.js';

export interface SolanaPlanDeps {
  snapshots: Pick<PaySnapshotStore, 'walletAddress'>;
  /** Builds the message on the deployment's Solana RPC (TREASURY_SOLANA_RPC_URL). */
  messages: Pick<ExactMessageBuilder, 'build'>;
}

export async function solanaSpendPlan(
  deps: SolanaPlanDeps,
  ctx: CallContext,
  chain: SvmChainInfo,
  input: { requirements: PaymentRequirements; capability: string | undefined; terms: AuthorizationTerms | undefined },
): Promise<SpendPlan> {
  const { requirements, capability, terms } = input;
  if (requirements.scheme !== 'exact')
    throw new AppError('scheme_not_supported', {
      fields: { scheme: requirements.scheme, supported_schemes: ['exact'], network: chain.network },
    });
  if (terms !== undefined)
    throw new AppError('invalid_authorization_terms', {
      message: 'A Solana payment takes no authorization terms: its transaction message fixes its own lifetime.',
      fields: { problems: ['authorization terms are not accepted on Solana'] },
    });
  if (requirements.asset !== chain.usdc)
    throw new AppError('asset_not_supported', {
      fields: { asset: requirements.asset, expected: chain.usdc, network: chain.network },
    });
  const wallet = await deps.snapshots.walletAddress(ctx.walletId);
  if (!wallet || wallet.account_id !== ctx.accountId) throw new AppError('wallet_not_found');
  if (wallet.network !== chain.network)
    throw new AppError('network_not_supported', {
      message: `This wallet is on ${wallet.network}; the payment asks for ${chain.network}.`,
      fields: { network: chain.network, wallet_network: wallet.network },
    });
  const feePayer = requirements.extra?.feePayer;
  const problems: string[] = [];
  if (requirements.payTo === wallet.address) problems.push('payTo is the paying wallet');
  if (feePayer === undefined) problems.push('extra.feePayer is missing');
  else if (feePayer === wallet.address) problems.push('extra.feePayer is the paying wallet');
  if (problems.length > 0 || feePayer === undefined)
    throw new AppError('svm_requirements_invalid', { fields: { problems } });
  const built = await deps.messages.build(wallet.address, {
    network: chain.network,
    asset: chain.usdc,
    amount: requirements.amount,
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    feePayer,
    memo: requirements.extra?.memo,
  });
  return {
    kind: 'pay',
    scheme: 'exact',
    chain,
    domain: undefined,
    to: requirements.payTo,
    amountMicro: BigInt(requirements.amount),
    capability,
    resource: requirements.resource,
    validForSeconds: requirements.maxTimeoutSeconds,
    solana: { message: built.message, messageHash: built.messageHash, feePayer, from: wallet.address },
  };
}

/**
 * The x402 `eip2612GasSponsoring` permit of an `upto` payment: when the seller's 402 advertises the
 * extension and the wallet has not approved Permit2, Treasury signs — after the payment itself was decided,
 * signed and recorded — an EIP-2612 `Permit` of the wallet's USDC to canonical Permit2 for exactly the
 * signed Permit2 maximum (the x402 upto proxy reverts `Permit2612AmountMismatch` otherwise), with the
 * token's current `nonces(owner)` and the Permit2 authorization's deadline, and writes a
 * `payment.permit_signed` row at the head of the wallet's audit chain before the signature leaves. The
 * buyer attaches it as `extensions.eip2612GasSponsoring.info`; the facilitator submits it with the
 * settlement (`settleWithPermit`), so the wallet never sends an `approve` transaction.
 *
 * Defends: a permit to anything but Permit2 (the signer refuses it: signer/assert.ts), for more than the
 * payment's signed maximum, or released without its audit row.
 * Does not defend: the permit leaves an allowance of at most the signed maximum to Permit2, which moves
 * tokens only with a Permit2 signature of the wallet (each one decided and counted by the pay path); a
 * retried payment signs a fresh permit (the token's nonce makes only one of them usable).
 */
import type { Knex } from 'knex';
import { PERMIT2_ADDRESS } from '@x402/evm';
import { runStatement, withWalletTransaction } from '../db/wallet-transaction.js';
import type { ChainInfo } from '../../shared/chain-registry.js';
import { AppError } from '../errors/app-error.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { CallContext } from './pay-types.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import { appendWalletAudit } from './store/pay-statements.js';

/** `extensions.eip2612GasSponsoring.info` minus what the seller declared (description, version: echoed by the buyer). */
export interface Eip2612PermitInfo {
  from: string;
  asset: string;
  spender: string;
  amount: string;
  nonce: string;
  deadline: string;
  signature: string;
  version: '1';
}

export async function signEip2612Permit(
  deps: {
    knex: Knex;
    signer: Pick<SignerGateway, 'call'>;
    clock: () => Date;
  },
  ctx: CallContext,
  chain: ChainInfo,
  payment: PaymentAuthorization,
  /** The token's `nonces(owner)`, read before the payment was reserved (an RPC failure then records nothing). */
  nonce: bigint,
): Promise<Eip2612PermitInfo> {
  if (payment.scheme !== 'upto') throw new AppError('internal_error', { message: 'A permit is for upto only.' });
  const auth = payment.permit2_authorization;
  const owner = auth.from as `0x${string}`;
  const [keys] = await runStatement<{ account_key_ref: string; wallet_key_ref: string }>(
    deps.knex,
    'SELECT a.account_key_ref, w.wallet_key_ref FROM wallets w JOIN treasury_accounts a ON a.id = w.account_id WHERE w.id = ? AND w.account_id = ?',
    [ctx.walletId, ctx.accountId],
    'treasury_wallet_key_refs_v1',
  );
  if (!keys) throw new AppError('wallet_not_found');
  const message = {
    owner,
    spender: PERMIT2_ADDRESS,
    value: auth.permitted.amount,
    nonce: nonce.toString(),
    deadline: auth.deadline,
  };
  const signed = await deps.signer.call('sign_eip2612_permit', {
    account_key_ref: keys.account_key_ref,
    wallet_key_ref: keys.wallet_key_ref,
    address: owner,
    domain: { name: chain.usdcName, version: chain.usdcVersion, chainId: chain.chainId, verifyingContract: chain.usdc },
    message,
  });
  // Recorded before it leaves: the permit's terms (not its signature) at the head of the wallet's chain.
  await withWalletTransaction(deps.knex, ctx.walletId, async (tx) => {
    await appendWalletAudit(tx, {
      chainKey: ctx.walletId,
      eventType: 'payment.permit_signed',
      actor: ctx.actor,
      payload: {
        authorization_id: payment.authorization_id,
        standard: 'eip2612',
        token: chain.usdc,
        owner,
        spender: PERMIT2_ADDRESS,
        value: message.value,
        nonce: message.nonce,
        deadline: message.deadline,
      },
      at: deps.clock(),
    });
  });
  return {
    from: owner,
    asset: chain.usdc,
    spender: PERMIT2_ADDRESS,
    amount: message.value,
    nonce: message.nonce,
    deadline: message.deadline,
    signature: signed.signature,
    version: '1',
  };
}

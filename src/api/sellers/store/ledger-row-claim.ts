/**
 * What a seller's ledger row is checked against on chain, beyond its amount and payer
 * (docs/security-model.md, "The merchant-of-record money flow"):
 *   - where its money must have gone: a `platform_mor` row's transfer must reach the seller's collection
 *     wallet on the row's network (the platform holds the money it will owe); a `direct` row's, one of the
 *     seller's proven pay-to addresses (revenue only, nothing is owed);
 *   - which Treasury authorization it settled, if it names a nonce: linked only when the transaction spent
 *     that authorization itself (src/api/chain/authorization-transfer.ts), never on the report's word.
 *
 * Defends: a platform_mor seller being owed money it moved between its own addresses (the platform never
 * received it); a seller tying its transaction to another, unsettled authorization of the same buyer.
 * Does not defend: a lying RPC endpoint (the verifier trusts the configured one).
 */
import type { Knex } from 'knex';
import { getAddress, type Hex } from 'viem';
import { authorizationTransferLog } from '../../chain/authorization-transfer.js';

export interface RowClaim {
  payout_mode: 'direct' | 'platform_mor';
  nonce: string | null;
}

export interface AuthorizationLink {
  authorization_id: string;
  decision_id: string;
  /** The Transfer log the authorization made: the one the row is verified on. */
  logIndex: number;
}

/**
 * The addresses the row's transfer may pay: the seller's collection wallet on the row's network for a
 * platform_mor row (none when it has none there: nothing can have reached it), its proven pay-to addresses
 * otherwise (`pay_to_not_registered` when it proved none yet).
 */
export async function recipientsOf(
  knex: Knex,
  row: { seller_id: string; network: string },
  claim: RowClaim,
): Promise<string[] | 'pay_to_not_registered'> {
  if (claim.payout_mode === 'platform_mor') {
    const collection = (await knex('platform_collection_wallets')
      .where({ seller_id: row.seller_id, network: row.network })
      .pluck('address')) as string[];
    return collection.map((a) => a.trim());
  }
  const payTo = (await knex('sellers_pay_to').where({ seller_id: row.seller_id }).pluck('address')) as string[];
  return payTo.length === 0 ? 'pay_to_not_registered' : payTo.map((a) => a.trim());
}

/**
 * The authorization of the row's payer with `nonce` (an `exact` one, on the row's network), if the mined
 * transaction's logs show that authorization's own transfer.
 */
export async function linkAuthorization(
  knex: Knex,
  row: { payer: string; network: string },
  nonce: string,
  logs: ReadonlyArray<{ address: string; topics: readonly Hex[]; data: Hex; logIndex: number }>,
  asset: string,
): Promise<AuthorizationLink | undefined> {
  // Authorizations hold the wallet's checksummed address: an exact match on the UNIQUE (from_address, scheme,
  // nonce) index.
  const auth = (await knex('authorizations')
    .where({ from_address: getAddress(row.payer.trim().toLowerCase()), scheme: 'exact', nonce: nonce.toLowerCase() })
    .andWhere({ network: row.network })
    .first('id', 'decision_id', 'from_address', 'to_address', 'amount_micro', 'nonce')) as
    | {
        id: string;
        decision_id: string;
        from_address: string;
        to_address: string;
        amount_micro: string;
        nonce: string;
      }
    | undefined;
  if (!auth) return undefined;
  const logIndex = authorizationTransferLog(logs, asset, {
    from: auth.from_address.trim(),
    to: auth.to_address.trim(),
    value: BigInt(auth.amount_micro),
    nonce: auth.nonce.trim(),
  });
  return logIndex === undefined ? undefined : { authorization_id: auth.id, decision_id: auth.decision_id, logIndex };
}

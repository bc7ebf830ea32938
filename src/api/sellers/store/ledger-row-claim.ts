/**
 * What a seller's ledger row is checked against on chain, beyond its amount and payer
 * (docs/security-model.md, "The merchant-of-record money flow"):
 *   - where its money may have gone, and so which mode the row is: a transfer to the seller's collection wallet
 *     on the row's network is a `platform_mor` row (the platform holds the money: it is owed to the seller); a
 *     transfer to one of the seller's proven pay-to addresses a `direct` one (revenue only, nothing is owed).
 *     The mode the seller was in when it reported the row is not where its buyer was told to pay — the seller
 *     may have switched since — so the chain decides (../ledger/ledger-verifier.ts); a collection wallet exists
 *     only for a seller that was `platform_mor` on that network (../payouts/platform-wallets.ts);
 *   - whether the transfer comes from the platform itself: a payer that is any seller's collection wallet, on any
 *     network, or a transaction that is a payout's, is no buyer (`platformTransfer`);
 *   - which Treasury authorization it settled, if it names a nonce: linked only when the transaction spent
 *     that authorization itself, never on the report's word — for an `exact` one, its EIP-3009 nonce used and
 *     its own transfer (src/api/chain/authorization-transfer.ts); for an `upto` one, the transaction is its Permit2
 *     settlement, the very permit and signature Treasury signed (src/api/chain/upto-settlement-transfer.ts).
 *
 * Defends: a platform_mor seller being owed money it moved between its own addresses (the platform never
 * received it); a seller being owed money that reached no collection wallet of its own, or losing money that
 * did because it switched modes before reporting; a payout (or any transfer out of a collection wallet)
 * counted as some seller's revenue; a seller tying its transaction to another, unsettled authorization of the
 * same buyer.
 * Does not defend: a lying RPC endpoint (the verifier trusts the configured one).
 */
import type { Knex } from 'knex';
import { getAddress } from 'viem';
import { x402UptoPermit2ProxyAddress } from '@x402/evm';
import { z } from 'zod';
import { authorizationTransferLog } from '../../chain/authorization-transfer.js';
import type { MinedTransaction } from '../../chain/balance-reader.js';
import { uptoSettlementTransferLog } from '../../chain/upto-settlement-transfer.js';
import { signedUptoPermit } from '../../chain/verify-upto-settlement.js';
import { permit2AuthorizationSchema } from '../../../shared/api-responses/pay-responses.js';

/** The part of an `upto` authorization's stored reply the link reads (a row from the database: parsed, not trusted). */
const storedUptoPermit = z.object({ permit2_authorization: permit2AuthorizationSchema });

/** What the row was reported as. */
export interface RowClaim {
  /**
   * The seller's mode when it reported the row: a guess at where its buyer paid, tried first. The chain decides
   * the row's mode when it verifies (`RowRecipients`).
   */
  payout_mode: 'direct' | 'platform_mor';
  nonce: string | null;
}

/** Where a seller's row may have paid, by the mode a transfer there makes it. */
export interface RowRecipients {
  /** The seller's collection wallet on the row's network, if it has one there (`platform_mor`). */
  collection: string[];
  /** Its proven pay-to addresses of the row's chain family (`direct`). */
  payTo: string[];
}

export interface AuthorizationLink {
  authorization_id: string;
  decision_id: string;
  /** The Transfer log the authorization made: the one the row is verified on. */
  logIndex: number;
}

/**
 * The addresses the row's transfer may pay, of the row's chain family: the seller's collection wallet on the
 * row's network (none when it has none there: the platform never collected for it there) and its proven
 * pay-to addresses (0x addresses for an EVM row, base58 ones for a Solana row).
 */
export async function recipientsOf(knex: Knex, row: { seller_id: string; network: string }): Promise<RowRecipients> {
  const solana = row.network.startsWith('solana:');
  const ofFamily = (addresses: string[]) => addresses.map((a) => a.trim()).filter((a) => a.startsWith('0x') !== solana);
  const collection = (await knex('platform_collection_wallets')
    .where({ seller_id: row.seller_id, network: row.network })
    .pluck('address')) as string[];
  const payTo = (await knex('sellers_pay_to').where({ seller_id: row.seller_id }).pluck('address')) as string[];
  return { collection: ofFamily(collection), payTo: ofFamily(payTo) };
}

/**
 * Whether the row's transfer is the platform's own: its payer is a collection wallet — any seller's, on any
 * network (an EVM address is the same on every chain) — or its transaction is a payout's. Such a transfer
 * (a payout to a pay-to address several sellers proved, say) is nobody's revenue.
 */
export async function platformTransfer(
  knex: Knex,
  row: { payer: string; network: string; tx_hash: string },
): Promise<boolean> {
  const payer = row.payer.trim();
  // Collection wallets are EVM wallets, stored lower-case: no base58 payer is one. One row per platform_mor
  // seller and network, read only for a row about to be verified.
  if (payer.startsWith('0x')) {
    const wallet = await knex('platform_collection_wallets').where({ address: payer.toLowerCase() }).first('wallet_id');
    if (wallet) return true;
  }
  // A payout's transaction (both stored lower-case), on the (network, tx_hash) unique index.
  const payout = await knex('payout_flushes').where({ network: row.network, tx_hash: row.tx_hash.trim() }).first('id');
  return !!payout;
}

/** An authorizations row as the link reads it: an `exact` one's terms, an `upto` one's stored reply and signature. */
interface NamedAuthorization {
  id: string;
  decision_id: string;
  scheme: 'exact' | 'upto';
  from_address: string;
  to_address: string;
  amount_micro: string;
  nonce: string;
  response: unknown;
  signature: string | null;
}

/** The Transfer log `auth` itself made in `tx`, as the chain shows it for its scheme (see the header). */
function transferLogOf(auth: NamedAuthorization, tx: MinedTransaction, asset: string): number | undefined {
  if (auth.scheme === 'exact')
    return authorizationTransferLog(tx.logs, asset, {
      from: auth.from_address.trim(),
      to: auth.to_address.trim(),
      value: BigInt(auth.amount_micro),
      nonce: auth.nonce.trim(),
    });
  const stored = storedUptoPermit.safeParse(auth.response);
  if (!stored.success || !auth.signature) return undefined;
  const permit = signedUptoPermit(stored.data.permit2_authorization, auth.signature.trim());
  if (permit.token.toLowerCase() !== asset.toLowerCase()) return undefined;
  return uptoSettlementTransferLog(tx, permit, x402UptoPermit2ProxyAddress);
}

/**
 * The authorization of the row's payer with `nonce` (an `exact` or an `upto` one, on the row's network), if the
 * mined transaction shows that authorization's own transfer.
 */
export async function linkAuthorization(
  knex: Knex,
  row: { payer: string; network: string },
  nonce: string,
  tx: MinedTransaction,
  asset: string,
): Promise<AuthorizationLink | undefined> {
  // Authorizations hold the wallet's checksummed address: exact matches on the UNIQUE (from_address, scheme,
  // nonce) index, at most one per scheme.
  const named = (await knex('authorizations')
    .where({ from_address: getAddress(row.payer.trim().toLowerCase()), nonce: nonce.toLowerCase() })
    .whereIn('scheme', ['exact', 'upto'])
    .andWhere({ network: row.network })
    .orderBy('scheme')
    .select(
      'id',
      'decision_id',
      'scheme',
      'from_address',
      'to_address',
      'amount_micro',
      'nonce',
      'response',
      'signature',
    )) as NamedAuthorization[];
  for (const auth of named) {
    const logIndex = transferLogOf(auth, tx, asset);
    if (logIndex !== undefined) return { authorization_id: auth.id, decision_id: auth.decision_id, logIndex };
  }
  return undefined;
}

/**
 * Settlements of x402 `upto` payments: an `upto` authorization is counted at its signed maximum when it is
 * signed (the seller may settle less, and nothing else bounds it before settlement); once a transaction that
 * settled it is reported, Treasury reads that transaction from the chain, checks it settled exactly this
 * authorization (./../chain/verify-upto-settlement.ts), and gives back the part of the maximum that was not
 * charged — under the wallet's lock, in the day, week and month windows the payment was counted in, in the
 * paying buyer PAT's day, with a `payment.settled` event in the wallet's audit chain and the settlement
 * stored on the authorization row. Anyone who may pay from the wallet may report; the buyer SDK does after
 * each `upto` payment whose receipt names a transaction.
 *
 * Defends: spend given back on a claim — only a mined, successful transaction carrying this authorization's
 * Permit2 nonce and signature counts, for what it moved, once it is as deep as the network requires
 * (TREASURY_LEDGER_CONFIRMATIONS, the same depth seller ledger rows wait for; shallower answers 409
 * `settlement_unconfirmed` with the confirmations so far, nothing given back, and the client reports again); a settlement counted twice (the row holds one
 * settlement; the same transaction reported again answers the stored result, another one 409; a transaction
 * settles one authorization, UNIQUE (network, settlement_tx)).
 * Does not defend: an `upto` authorization that is never settled or whose settlement is never reported — it
 * stays counted at its maximum (fail-safe); a settlement reorganised away after it reached the required depth.
 */
import type { Knex } from 'knex';
import { x402UptoPermit2ProxyAddress } from '@x402/evm';
import type { Hash } from 'viem';
import { formatUsd } from '../../../policy/money.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { signedUptoPermit, verifyUptoSettlement } from '../chain/verify-upto-settlement.js';
import { requiredConfirmations } from '../config/app-config.js';
import { runStatement, withWalletTransaction } from '../db/wallet-transaction.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { giveBackSpend } from './store/give-back-spend.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import type { Settlement } from '../../shared/api-responses/pay-responses.js';

/** The reply's shape is the shared response schema (src/shared/api-responses/pay-responses.ts). */
export type SettlementView = Settlement;

interface AuthorizationRow {
  id: string;
  wallet_id: string;
  account_id: string;
  scheme: string;
  status: string;
  network: string;
  amount_micro: string;
  actor: string;
  created_at: Date;
  response: PaymentAuthorization;
  signature: string | null;
  settled_raw: string | null;
  settlement_tx: string | null;
  settled_at: Date | null;
}

const READ_AUTHORIZATION = `SELECT a.id, a.wallet_id, w.account_id, a.scheme, a.status, a.network, a.amount_micro, a.actor, a.created_at, a.response, a.signature,
  a.settled_raw, a.settlement_tx, a.settled_at
  FROM authorizations a JOIN wallets w ON w.id = a.wallet_id WHERE a.id = ? AND a.wallet_id = ?`;

/** What the settlement service is built with (src/api/app.ts). */
export interface SettlementServiceDeps {
  knex: Knex;
  chains: ChainRegistry;
  chainReader: Pick<BalanceReader, 'minedTransaction'>;
  metrics: TreasuryMetrics;
  clock: () => Date;
  /** Called once a settlement changed a wallet's totals and audit chain (the pay path forgets what it remembered of it). */
  onWalletChanged?: (walletId: string) => void;
  /** Confirmations required per network before spend is given back (networks not named need 1). */
  confirmations?: Readonly<Record<string, number>>;
}

export class SettlementService {
  private readonly knex: Knex;
  private readonly chains: ChainRegistry;
  private readonly chainReader: Pick<BalanceReader, 'minedTransaction'>;
  private readonly metrics: TreasuryMetrics;
  private readonly clock: () => Date;
  private readonly onWalletChanged: (walletId: string) => void;
  private readonly confirmations: Readonly<Record<string, number>>;

  constructor(deps: SettlementServiceDeps) {
    this.knex = deps.knex;
    this.chains = deps.chains;
    this.chainReader = deps.chainReader;
    this.metrics = deps.metrics;
    this.clock = deps.clock;
    this.onWalletChanged = deps.onWalletChanged ?? (() => undefined);
    this.confirmations = deps.confirmations ?? {};
  }

  /** Verifies `transaction` as the settlement of `authorizationId` and gives back the unsettled part (see the header). */
  async recordUptoSettlement(
    ctx: { accountId: string; walletId: string; actor: string },
    authorizationId: string,
    transaction: Hash,
  ): Promise<SettlementView> {
    const outcome = (o: string) => this.metrics.uptoSettlements.inc({ outcome: o });
    try {
      const row = await this.read(ctx, authorizationId);
      const stored = this.storedSettlement(row, transaction);
      if (stored) {
        outcome('replayed');
        return stored;
      }
      const payment = row.response;
      if (payment.scheme !== 'upto' || !row.signature)
        throw new Error(`authorization ${row.id} is signed upto but holds no Permit2 authorization or signature`);
      const chain = this.chains.resolve(row.network);
      if (!chain) throw new AppError('network_not_supported', { fields: { network: row.network } });
      const tx = await this.chainReader.minedTransaction(chain, transaction);
      if (!tx)
        throw new AppError('settlement_not_verified', {
          message: "No mined transaction has that hash on the payment's network (yet).",
          fields: { reason: 'transaction_not_found' },
        });
      // Judged only once as deep as required: a reorganisation could still drop or reorder a shallower one.
      const required = requiredConfirmations(this.confirmations, chain.network);
      if (tx.confirmations < required) {
        throw new AppError('settlement_unconfirmed', {
          fields: {
            transaction: transaction.toLowerCase(),
            confirmations: tx.confirmations,
            required_confirmations: required,
          },
        });
      }
      const settledRaw = verifyUptoSettlement(
        tx,
        signedUptoPermit(payment.permit2_authorization, row.signature),
        x402UptoPermit2ProxyAddress,
      );
      const view = await this.giveBack(ctx, row, transaction.toLowerCase(), settledRaw);
      outcome(view.replayed ? 'replayed' : 'recorded');
      return view;
    } catch (err) {
      outcome(err instanceof AppError ? err.code : 'failed');
      throw err;
    }
  }

  private async read(ctx: { accountId: string; walletId: string }, authorizationId: string): Promise<AuthorizationRow> {
    const [row] = await runStatement<AuthorizationRow>(
      this.knex,
      READ_AUTHORIZATION,
      [authorizationId, ctx.walletId],
      'treasury_settlement_read_v1',
    );
    if (!row || row.account_id !== ctx.accountId)
      throw new AppError('authorization_not_found', { fields: { authorization_id: authorizationId } });
    if (row.scheme !== 'upto') {
      throw new AppError('settlement_not_applicable', {
        message: 'An "exact" authorization settles its whole value: there is nothing to give back.',
        fields: { scheme: row.scheme },
      });
    }
    if (row.status !== 'signed') {
      throw new AppError('settlement_not_applicable', {
        message: 'Only a signed authorization can have been settled.',
        fields: { status: row.status },
      });
    }
    return row;
  }

  /** The settlement already recorded on `row`: its view for the same transaction, 409 for another, undefined for none. */
  private storedSettlement(row: AuthorizationRow, transaction: string): SettlementView | undefined {
    if (row.settlement_tx === null) return undefined;
    if (row.settlement_tx !== transaction.toLowerCase()) {
      throw new AppError('settlement_already_recorded', {
        fields: { authorization_id: row.id, transaction: row.settlement_tx },
      });
    }
    return view(row, BigInt(row.settled_raw!), row.settled_at!, true);
  }

  private async giveBack(
    ctx: { walletId: string; actor: string },
    row: AuthorizationRow,
    transaction: string,
    settledRaw: bigint,
  ): Promise<SettlementView> {
    const max = BigInt(row.amount_micro);
    const back = max - settledRaw;
    const windows = policyWindows(row.created_at);
    const at = this.clock();
    const result = await withWalletTransaction(this.knex, ctx.walletId, async (tx) => {
      const [updated] = await tx.query<{ id: string }>(
        `UPDATE authorizations SET settled_raw = ?, settlement_tx = ?, settled_at = ? WHERE id = ? AND status = 'signed' AND settlement_tx IS NULL RETURNING id`,
        [settledRaw.toString(), transaction, at, row.id],
        'treasury_settlement_record_v1',
      );
      // Recorded meanwhile (another report raced this one): answer what was stored.
      if (!updated) return undefined;
      // The paying buyer PAT's day counted the maximum too (a PAT's payment has the PAT as its actor).
      await giveBackSpend(
        tx,
        ctx.walletId,
        { amountMicro: back, windows, uncount: false, patTokenId: row.actor },
        {
          eventType: 'payment.settled',
          actor: ctx.actor,
          payload: {
            authorization_id: row.id,
            transaction,
            signed_max_usd: formatUsd(max),
            settled_usd: formatUsd(settledRaw),
            given_back_usd: formatUsd(back),
          },
          at,
        },
      );
      return view(row, settledRaw, at, false, transaction);
    }).catch((err: unknown) => {
      const pgErr = err as { code?: string; constraint?: string };
      if (pgErr.code === '23505' && pgErr.constraint === 'authorizations_network_settlement_tx_unique') {
        throw new AppError('settlement_not_verified', {
          message: 'That transaction is recorded as the settlement of another authorization.',
          fields: { reason: 'authorization_mismatch' },
        });
      }
      throw err;
    });
    if (result) {
      this.onWalletChanged(ctx.walletId);
      return result;
    }
    const stored = this.storedSettlement(
      await this.read({ accountId: row.account_id, walletId: ctx.walletId }, row.id),
      transaction,
    );
    return stored!;
  }
}

function view(
  row: AuthorizationRow,
  settledRaw: bigint,
  at: Date,
  replayed: boolean,
  transaction = row.settlement_tx!,
): SettlementView {
  const max = BigInt(row.amount_micro);
  return {
    authorization_id: row.id,
    wallet_id: row.wallet_id,
    scheme: 'upto',
    network: row.network,
    transaction,
    signed_max_usd: formatUsd(max),
    settled_usd: formatUsd(settledRaw),
    given_back_usd: formatUsd(max - settledRaw),
    settled_at: at.toISOString(),
    replayed,
  };
}

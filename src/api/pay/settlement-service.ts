/**
 * Settlements of x402 payments, reported by whoever may pay from the wallet (the buyer SDK does after
 * each payment whose receipt names a transaction): Treasury reads that transaction from the chain, checks it
 * settled exactly this authorization (./verify-reported-settlement.ts), and stores the settlement on the
 * authorization row with a `payment.settled` event in the wallet's audit chain — what the payment histories
 * show as `settled`, with the transaction.
 * - `upto`: the authorization is counted at its signed maximum when it is signed (the seller may settle less,
 *   and nothing else bounds it before settlement); the part of the maximum that was not charged is given back
 *   under the wallet's lock, in the day, week and month windows the payment was counted in and in the paying
 *   buyer PAT's day.
 * - `exact`: the whole signed value settles; nothing is given back (the settlement is recorded and audited).
 *
 * Defends: spend given back, or a payment shown settled, on a claim — only a mined, successful transaction
 * carrying this very authorization counts, for what it moved, once it is as deep as the network requires
 * (TREASURY_LEDGER_CONFIRMATIONS, the same depth seller ledger rows wait for; shallower answers 409
 * `settlement_unconfirmed` with the confirmations so far, nothing stored, and the client reports again); a
 * settlement counted twice (the row holds one settlement; the same transaction reported again answers the
 * stored result, another one 409; a transaction settles one authorization, UNIQUE (network, settlement_tx)).
 * Does not defend: an authorization that is never settled or whose settlement is never reported — an `upto`
 * one stays counted at its maximum (fail-safe), an `exact` one stays `signed` (then `expired`) in the
 * histories unless a verified seller ledger row names it; a settlement reorganised away after it reached the
 * required depth; one transaction settling two authorizations of Treasury wallets (a facilitator's batch: the
 * second report is refused by the unique index).
 * - Solana `exact`: the transaction (named by its signature) is read from TREASURY_SOLANA_RPC_URL once
 *   confirmed, and must be the very message the wallet signed (./verify-reported-settlement.ts); nothing is
 *   given back.
 */
import type { Knex } from 'knex';
import type { Hash } from 'viem';
import { formatUsd } from '../../../policy/money.js';
import { policyWindows } from '../../../policy/policy-windows.js';
import type { BalanceReader, MinedTransaction } from '../chain/balance-reader.js';
import type { ChainReads } from '../chain/chain-read-admission.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { requiredConfirmations, type AppConfig } from '../config/app-config.js';
import { runStatement, withWalletTransaction } from '../db/wallet-transaction.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import { giveBackSpend } from './store/give-back-spend.js';
import type { PaymentAuthorization } from './payment-authorization.js';
import {
  isSolanaPayment,
  settlementKey,
  settlementScheme,
  verifyReportedSettlement,
  verifyReportedSolanaSettlement,
  type SettlementScheme,
} from './verify-reported-settlement.js';
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
  /** Where a Solana settlement's read waits for its tenant's place (the EVM reads wait inside `chainReader`). */
  chainReads: ChainReads;
  metrics: TreasuryMetrics;
  clock: () => Date;
  /** Called once a settlement changed a wallet's totals and audit chain (the pay path forgets what it remembered of it). */
  onWalletChanged?: (walletId: string) => void;
  /**
   * What it reads of the configuration: the confirmations required per network before a settlement counts
   * (networks not named need 1), and where a Solana payment's settlement is read (TREASURY_SOLANA_RPC_URL).
   */
  config: Pick<AppConfig, 'confirmations' | 'solanaRpcUrl' | 'rpcTimeoutMs'>;
}

export class SettlementService {
  private readonly knex: Knex;
  private readonly chains: ChainRegistry;
  private readonly chainReader: Pick<BalanceReader, 'minedTransaction'>;
  private readonly chainReads: ChainReads;
  private readonly metrics: TreasuryMetrics;
  private readonly clock: () => Date;
  private readonly onWalletChanged: (walletId: string) => void;
  private readonly confirmations: Readonly<Record<string, number>>;
  private readonly solanaRpc: { url: string; timeoutMs: number } | undefined;

  constructor(deps: SettlementServiceDeps) {
    this.knex = deps.knex;
    this.chains = deps.chains;
    this.chainReader = deps.chainReader;
    this.chainReads = deps.chainReads;
    this.metrics = deps.metrics;
    this.clock = deps.clock;
    this.onWalletChanged = deps.onWalletChanged ?? (() => undefined);
    this.confirmations = deps.config.confirmations;
    const { solanaRpcUrl, rpcTimeoutMs } = deps.config;
    this.solanaRpc = solanaRpcUrl === undefined ? undefined : { url: solanaRpcUrl, timeoutMs: rpcTimeoutMs };
  }

  /** Verifies `transaction` as the settlement of `authorizationId` and records it (see the header). */
  async recordSettlement(
    ctx: { accountId: string; walletId: string; actor: string },
    authorizationId: string,
    transaction: string,
  ): Promise<SettlementView> {
    let scheme: SettlementScheme | undefined;
    try {
      const row = await this.read(ctx, authorizationId);
      scheme = settlementScheme(row.response);
      const key = settlementKey(row.response, transaction);
      const stored = this.storedSettlement(row, key);
      if (stored) {
        this.count(scheme, 'replayed');
        return stored;
      }
      if (!row.signature) throw new Error(`authorization ${row.id} is signed but holds no signature`);
      const response = row.response;
      const settledRaw = isSolanaPayment(response)
        ? await this.chainReads.run(ctx.accountId, () => verifyReportedSolanaSettlement(this.solanaRpc, response, key))
        : verifyReportedSettlement(
            row.response,
            row.signature,
            await this.deepEnough(ctx.accountId, row.network, key as Hash),
          );
      const result = await this.record(ctx, row, scheme, key, settledRaw);
      this.count(scheme, result.replayed ? 'replayed' : 'recorded');
      return result;
    } catch (err) {
      // A report refused before its authorization was read (not found) is counted with `upto`'s, as before.
      this.count(scheme ?? 'upto', err instanceof AppError ? err.code : 'failed');
      throw err;
    }
  }

  private count(scheme: SettlementScheme, outcome: string): void {
    (scheme === 'upto' ? this.metrics.uptoSettlements : this.metrics.exactSettlements).inc({ outcome });
  }

  /** The mined transaction `transaction` on `network`, once as deep as the network requires (see the header). */
  private async deepEnough(tenant: string, network: string, transaction: Hash): Promise<MinedTransaction> {
    const chain = this.chains.resolve(network);
    if (!chain) throw new AppError('network_not_supported', { fields: { network } });
    const tx = await this.chainReader.minedTransaction(tenant, chain, transaction);
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
    return tx;
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
    if (row.status !== 'signed') {
      throw new AppError('settlement_not_applicable', {
        message: 'Only a signed authorization can have been settled.',
        fields: { status: row.status },
      });
    }
    return row;
  }

  /** The settlement already recorded on `row`: its view for the same transaction (as stored: `settlementKey`), 409 for another, undefined for none. */
  private storedSettlement(row: AuthorizationRow, transaction: string): SettlementView | undefined {
    if (row.settlement_tx === null) return undefined;
    if (row.settlement_tx !== transaction) {
      throw new AppError('settlement_already_recorded', {
        fields: { authorization_id: row.id, transaction: row.settlement_tx },
      });
    }
    return view(row, BigInt(row.settled_raw!), row.settled_at!, true);
  }

  /** Stores the settlement on `row` with its audit event (an `upto` one gives back the unsettled part) under the wallet's lock. */
  private async record(
    ctx: { walletId: string; actor: string },
    row: AuthorizationRow,
    scheme: SettlementScheme,
    transaction: string,
    settledRaw: bigint,
  ): Promise<SettlementView> {
    const max = BigInt(row.amount_micro);
    // An exact payment settles what was signed: nothing to give back.
    const back = scheme === 'upto' ? max - settledRaw : 0n;
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
        { amountMicro: back, windows: policyWindows(row.created_at), uncount: false, patTokenId: row.actor },
        {
          eventType: 'payment.settled',
          actor: ctx.actor,
          payload: {
            authorization_id: row.id,
            scheme,
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
  const scheme = settlementScheme(row.response);
  return {
    authorization_id: row.id,
    wallet_id: row.wallet_id,
    scheme,
    network: row.network,
    transaction,
    signed_max_usd: formatUsd(max),
    settled_usd: formatUsd(settledRaw),
    given_back_usd: formatUsd(scheme === 'upto' ? max - settledRaw : 0n),
    settled_at: at.toISOString(),
    replayed,
  };
}

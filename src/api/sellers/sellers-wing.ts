/**
 * The sellers wing wired in one place, for the composition root (src/api/app.ts): its PostgreSQL stores first
 * (./store/), then its services, each given a deps object, then what the routes take. What it needs of other
 * wings comes in narrow: the platform's accounts and PATs, the wallets (collection wallets are wallets), the pay
 * service (a payout is paid through it), the chain reader.
 *
 * Defends: the wing's wiring scattered through the composition root. Does not defend: the configuration's
 * values (src/api/config/app-config.ts checks them).
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { formatUsd } from '../../../policy/money.js';
import type { ChainRegistry } from '../../shared/chain-registry.js';
import { createFacilitatorClient } from '../../x402/facilitator-client.js';
import type { BalanceReader } from '../chain/balance-reader.js';
import type { ChainReads } from '../chain/chain-read-admission.js';
import { AuthorizationUseReader } from '../chain/find-authorization-use.js';
import type { AppConfig } from '../config/app-config.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';
import type { HostResolver } from '../net/vetted-fetch.js';
import type { PayService } from '../pay/pay-service.js';
import type { AccountService } from '../platform/account-service.js';
import type { PatService } from '../platform/pat-service.js';
import type { WalletService } from '../wallets/wallet-service.js';
import { GateService } from './gate/gate-service.js';
import { EndpointMatcherCache } from './ledger/endpoint-matcher-cache.js';
import { LedgerPendingCap } from './ledger/ledger-pending-cap.js';
import { LedgerVerifier } from './ledger/ledger-verifier.js';
import { SellerLedgerService } from './ledger/seller-ledger-service.js';
import { SolanaLedgerCheck } from './ledger/solana-ledger-check.js';
import { PayoutRail } from './payouts/payout-rail.js';
import { PlatformWallets } from './payouts/platform-wallets.js';
import { SellerPayouts } from './payouts/seller-payouts.js';
import { SellerPayToService } from './seller-pay-to-service.js';
import { createSellerServices, type SellerServices } from './seller-service.js';
import { PgEndpointStore } from './store/pg-endpoint-store.js';
import { PgEndpointRoutes, PgPayToStore, PgPendingRowCounts, PgSellerLedgerStore } from './store/pg-ledger-stores.js';
import { PgLedgerVerificationStore } from './store/pg-ledger-verification-store.js';
import { PgCollectionWalletStore, PgPayoutStore } from './store/pg-payout-stores.js';
import { PgGateCatalogueStore, PgSellerStore } from './store/pg-seller-stores.js';
import { PaymentIdService } from './payment-ids/payment-id-service.js';
import { PaymentIdSweeper } from './payment-ids/payment-id-sweeper.js';
import { PgPaymentIdStore } from './store/pg-payment-id-store.js';
import { PgProofRecheckStore } from './proofs/proof-recheck-store.js';
import { ProofRechecker } from './proofs/proof-rechecker.js';

export interface SellersWingDeps {
  config: AppConfig;
  knex: Knex;
  log: Logger;
  metrics: TreasuryMetrics;
  clock: () => Date;
  chains: ChainRegistry;
  balances: Pick<BalanceReader, 'minedTransaction'>;
  /** Where the verifier's Solana reads wait for their seller's place (../chain/chain-read-admission.ts). */
  chainReads: ChainReads;
  accounts: Pick<AccountService, 'create'>;
  wallets: Pick<WalletService, 'create'>;
  pats: Pick<PatService, 'create' | 'list' | 'revoke'>;
  pay: Pick<PayService, 'pay'>;
  /** Test seam: how tenant-supplied host names are resolved (src/api/net/vetted-fetch.ts). */
  resolveHost?: HostResolver | undefined;
}

export interface SellersWing {
  /** Decides reported ledger rows on chain in the background (started and stopped by the app). */
  ledgerVerifier: LedgerVerifier;
  sellers: SellerServices;
  ledger: SellerLedgerService;
  pendingCap: LedgerPendingCap;
  payTo: SellerPayToService;
  payouts: SellerPayouts;
  collections: PlatformWallets;
  gate: GateService;
  /** The x402 payment-identifier store of sellers' paywalls (./payment-ids/). */
  paymentIds: PaymentIdService;
  /** Deletes every seller's expired payment-identifier rows (run in the background by the app). */
  paymentIdSweeper: PaymentIdSweeper;
  gateStore: PgGateCatalogueStore;
  /** Fetches sellers' origin and gates' address proofs again, withdrawing stale ones (started and stopped by the app). */
  proofRechecker: ProofRechecker;
}

export function createSellersWing(deps: SellersWingDeps): SellersWing {
  const { config, knex, clock, chains } = deps;
  // Seller ledger rows count once verified on chain; the verifier runs in the background while the app listens.
  const ledgerVerifier = new LedgerVerifier({
    store: new PgLedgerVerificationStore(knex),
    chains,
    reader: deps.balances,
    rpcUrls: config.rpcUrls,
    solana: new SolanaLedgerCheck({ rpcUrl: config.solanaRpcUrl, timeoutMs: config.rpcTimeoutMs }),
    chainReads: deps.chainReads,
    metrics: deps.metrics,
    log: deps.log,
    clock,
    options: {
      intervalMs: config.ledgerVerifyIntervalMs,
      concurrency: config.ledgerVerifyConcurrency,
      confirmations: config.confirmations,
      notFoundGraceSeconds: config.ledgerNotFoundGraceSeconds,
      sellerShare: config.ledgerVerifySellerShare,
    },
  });
  const sellers = createSellerServices({
    sellers: new PgSellerStore(knex),
    endpoints: new PgEndpointStore(knex),
    pats: deps.pats,
    clock,
    options: {
      allowPrivateOrigins: config.verifyAllowPrivate,
      outboundAllowedPorts: config.outboundAllowedPorts,
      resolveHost: deps.resolveHost,
      maxEndpoints: config.sellerMaxEndpoints,
      maxSellersPerAccount: config.maxSellersPerAccount,
    },
  });
  const ledger = new SellerLedgerService({
    store: new PgSellerLedgerStore(knex),
    clock,
    ledgerVerifier,
    endpoints: new EndpointMatcherCache(new PgEndpointRoutes(knex)),
  });
  const {
    ledgerMaxPendingPerSeller: perSeller,
    ledgerMaxPendingPerAccount: perAccount,
    ledgerMaxRejectedPerSeller: rejectedPerSeller,
  } = config;
  const pendingCap = new LedgerPendingCap(new PgPendingRowCounts(knex), perSeller, perAccount, rejectedPerSeller);
  // The platform as merchant of record: per-seller collection wallets and payouts out of them (docs/adr/0011).
  const defaultNetwork = chains.resolve(config.defaultChain)?.network ?? config.defaultChain;
  const collections = new PlatformWallets({
    store: new PgCollectionWalletStore(knex),
    accounts: deps.accounts,
    wallets: deps.wallets,
    chains,
    options: {
      networks: config.morNetworks ?? [...new Set([defaultNetwork, ...Object.keys(config.rpcUrls)])],
      policy: { per_tx_cap_usd: formatUsd(config.morPayoutMaxMicro) },
    },
  });
  const payouts = new SellerPayouts({
    store: new PgPayoutStore(knex),
    clock,
    chains,
    rail: config.facilitatorUrl
      ? new PayoutRail(deps.pay, createFacilitatorClient({ url: config.facilitatorUrl }))
      : undefined,
    chainUse: new AuthorizationUseReader(config.rpcUrls, config.rpcTimeoutMs),
    options: { maxPayoutMicro: config.morPayoutMaxMicro },
  });
  const payTo = new SellerPayToService({ store: new PgPayToStore(knex), clock, pendingCap, ledgerVerifier });
  const gateStore = new PgGateCatalogueStore(knex);
  const gate = new GateService({
    store: gateStore,
    ledger,
    pendingCap,
    collections,
    defaultNetwork,
  });
  // The wing's own background work: the payment-identifier sweep and the re-checker of proofs of control.
  const parts = { ...paymentIdParts(deps), proofRechecker: proofRecheckerOf(deps) };
  return { ledgerVerifier, sellers, ledger, pendingCap, payTo, payouts, collections, gate, gateStore, ...parts };
}

/** The re-checker of proofs of control, with the outbound rules the first proofs use (./proofs/). */
function proofRecheckerOf(deps: SellersWingDeps): ProofRechecker {
  const { config } = deps;
  return new ProofRechecker({
    store: new PgProofRecheckStore(deps.knex),
    outbound: {
      allowPrivate: config.verifyAllowPrivate,
      allowedPorts: config.outboundAllowedPorts,
      resolveHost: deps.resolveHost,
    },
    metrics: deps.metrics,
    log: deps.log,
    clock: deps.clock,
    options: config.proofRecheck,
  });
}

/** The payment-identifier store's service, with its per-seller budgets, and the sweep of its expired rows. */
function paymentIdParts(deps: SellersWingDeps): Pick<SellersWing, 'paymentIds' | 'paymentIdSweeper'> {
  const store = new PgPaymentIdStore(deps.knex);
  return {
    paymentIds: new PaymentIdService({ store, clock: deps.clock, bounds: deps.config.paymentIdBounds }),
    paymentIdSweeper: new PaymentIdSweeper({ store, clock: deps.clock, log: deps.log }),
  };
}

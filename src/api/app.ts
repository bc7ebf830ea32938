/**
 * Composition root of treasury-api: wires config, stores, services, routes and middleware into a Koa app.
 * Everything is built here and passed down; nothing below reads process.env or global singletons.
 */
import http from 'node:http';
import https from 'node:https';
import Koa from 'koa';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { Authenticator } from './auth/authenticator.js';
import { pgCredentialStore } from './auth/credential-store.js';
import { ChainRegistry } from '../shared/chain-registry.js';
import type { AppConfig } from './config/app-config.js';
import { errorHandler } from './http/middleware/error-handler.js';
import { jsonBody } from './http/middleware/json-body.js';
import { requestContext } from './http/middleware/request-context.js';
import { RateLimits, rateLimitByAddress, rateLimitedAuthenticator } from './http/middleware/rate-limit.js';
import { opsRoutes } from './http/routes/ops-routes.js';
import { API_CATALOG } from './api-catalog.js';
import { describeError } from './log/describe-error.js';
import { docsRoutes } from './http/routes/docs-routes.js';
import { dashboardStatic } from './http/dashboard-static.js';
import { payRoutes } from './pay/pay-routes.js';
import { identityRoutes } from './identity/identity-routes.js';
import { agentRoutes } from './platform/agent-routes.js';
import { patRoutes } from './platform/pat-routes.js';
import { PaymentHistoryService } from './wallets/payment-history-service.js';
import { AgentService } from './platform/agent-service.js';
import { IdentityService } from './identity/identity-service.js';
import { PatService } from './platform/pat-service.js';
import { sellerRoutes } from './sellers/seller-routes.js';
import { gateRoutes } from './sellers/gate/gate-routes.js';
import { sandboxRoutes } from './faucets/faucet-routes.js';
import { discoveryWingRoutes } from './discovery/discovery-wing.js';
import { createSellersWing, type SellersWing } from './sellers/sellers-wing.js';
import type { LedgerVerifier } from './sellers/ledger/ledger-verifier.js';
import { treasuryRoutes } from './platform/treasury-routes.js';
import { walletRoutes } from './wallets/wallet-routes.js';
import { walletHistoryRoutes } from './wallets/wallet-history-routes.js';
import { BalanceReader } from './chain/balance-reader.js';
import { ChainReadAdmission } from './chain/chain-read-admission.js';
import { SettlementService } from './pay/settlement-service.js';
import { createTreasuryMetrics, type TreasuryMetrics } from './metrics/treasury-metrics.js';
import { registerPoolMetrics } from './metrics/register-pool-metrics.js';
import { AccountService } from './platform/account-service.js';
import { pgPlatformStores } from './platform/store/pg-platform-stores.js';
import { treasuryTenantOf } from './platform/treasury-tenant.js';
import { pgIdentityStore } from './identity/store/pg-identity-store.js';
import { agentWalletsOf } from './wallets/agent-wallets-port.js';
import { PayService } from './pay/pay-service.js';
import { PayAdmission } from './pay/pay-admission.js';
import { ExpiredReservationSweeper } from './pay/expired-reservation-sweeper.js';
import { SignerGateway } from './signing/signer-gateway.js';
import { WalletService } from './wallets/wallet-service.js';
import { OwnerPolicyService } from './wallets/owner-policy-service.js';
import { bearerPolicyState } from './wallets/bearer-policy-state.js';
import { PgWalletStore } from './wallets/store/pg-wallet-store.js';
import { PgWalletHistoryStore } from './wallets/store/pg-wallet-history-store.js';
import { WalletHistoryService } from './wallets/wallet-history-service.js';
import type { HostResolver } from './net/vetted-fetch.js';
import { installedPayFaultHooks } from './pay/pay-fault-hooks.js';
import { closeable, closeInOrder, type Closeable, type CloseReport } from '../../base/closeables.js';
import { startRepeatingTask, type RepeatingTask } from '../../base/repeating-task.js';

export interface TreasuryApp {
  koa: Koa;
  /** Every method and path the app serves (`{param}` form), for the OpenAPI completeness test. */
  routes: Array<{ method: string; path: string }>;
  metrics: TreasuryMetrics;
  services: {
    accounts: AccountService;
    wallets: WalletService;
    pay: PayService;
    signer: SignerGateway;
    expiredReservations: ExpiredReservationSweeper;
    ledgerVerifier: LedgerVerifier;
  } & Pick<SellersWing, 'paymentIdSweeper' | 'proofRechecker'>;
  listen(port: number, host: string): Promise<http.Server>;
  /**
   * What the app must close, in order (base/closeables.ts): stop accepting, drain in-flight requests, stop the
   * background work (the ledger verifier, the proof re-checker, the rate-limit clean-up, then `workers`: the
   * caller's own timers), close the pay path's own connections and the signer client. The caller owns knex and
   * closes it after these.
   */
  closeables(workers?: readonly Closeable[]): Closeable[];
  /** Closes `closeables()` in order, every step attempted and bounded; the report says which failed. */
  close(): Promise<CloseReport>;
}

/** What the app is built with (./main.ts, the test harness). */
export type TreasuryAppDeps = {
  config: AppConfig;
  knex: Knex;
  log: Logger;
  clock?: () => Date;
  /** Test seam: how tenant-supplied host names are resolved (src/api/net/vetted-fetch.ts). */ resolveHost?: HostResolver;
  /** Test seam: the built dashboard's folder (./http/dashboard-static.ts; .build/dashboard/ by default). */
  dashboardDir?: string;
};

/** The floors every wing stands on: config, metrics, the signer, the bearer's check, accounts, balances, wallets. */
function buildCore(deps: TreasuryAppDeps) {
  const { config, knex, log } = deps;
  const clock = deps.clock ?? (() => new Date());
  const metrics = createTreasuryMetrics();
  registerPoolMetrics(metrics.registry, knex);
  const chains = ChainRegistry.fromConfig(config.extraChains, { solana: config.solanaRpcUrl !== undefined });
  const platformStores = pgPlatformStores(knex);
  // A Treasury account's tenant: its agent's owner's platform account (the signer's and the RPC's shares count by it).
  const tenantOf = treasuryTenantOf(platformStores.accounts.ownerOfTreasury);
  const signer = SignerGateway.connect(config, metrics, tenantOf);
  const auth = new Authenticator(pgCredentialStore(knex), config.adminToken, config.authCacheMs);
  const rateLimits = new RateLimits(config.rateLimits, knex, metrics);
  if (!rateLimits.enabled) log.warn('rate limits are off (TREASURY_RATE_LIMITS=off): for benchmarks only');
  // Routes see the authenticator through their rate-limit bucket: per token, the pay routes in memory (docs/security-model.md).
  const tokenAuth = rateLimitedAuthenticator(auth, rateLimits, 'token');
  const payAuth = rateLimitedAuthenticator(auth, rateLimits, 'pay');
  const accounts = new AccountService({ store: platformStores.accounts, signer, metrics, maxPats: config.maxPats });
  const chainReads = ChainReadAdmission.fromConfig(config, metrics, tenantOf);
  const balances = BalanceReader.fromConfig(config, { knex, reads: chainReads, metrics, clock });
  // The wallet wing: its stores, then its services (src/api/wallets/).
  const walletStore = new PgWalletStore(knex);
  const walletHistoryStore = new PgWalletHistoryStore(knex);
  const wallets = new WalletService({
    store: walletStore,
    signer,
    accounts,
    chains,
    metrics,
    log,
    defaultChain: config.defaultChain,
    balances,
    bounds: config.walletBounds,
  });
  const ownerPolicies = new OwnerPolicyService({ store: walletStore, signer, wallets, accounts, metrics });
  return {
    config,
    knex,
    log,
    clock,
    metrics,
    chains,
    signer,
    auth,
    rateLimits,
    tokenAuth,
    payAuth,
    platformStores,
    accounts,
    chainReads,
    balances,
    walletStore,
    walletHistoryStore,
    wallets,
    ownerPolicies,
    resolveHost: deps.resolveHost,
  };
}

type Core = ReturnType<typeof buildCore>;

/** The pay wing: payments, settlements, and the sweeper of expired reservations. */
function buildPayWing(core: Core) {
  const { config, knex, clock, metrics, chains, signer, balances, chainReads } = core;
  const pay = new PayService({
    knex,
    signer,
    chains,
    metrics,
    clock,
    wallets: core.wallets,
    dashboardUrl: config.dashboardUrl,
    faults: installedPayFaultHooks(), // crash points of the crash tests: none unless a test preload installed them
    chainReader: balances,
    solana: config,
    snapshotMemoryBytes: config.paySnapshotMemoryBytes,
  });
  const settlements = new SettlementService({
    knex,
    chains,
    chainReader: balances,
    chainReads,
    metrics,
    clock,
    onWalletChanged: (walletId) => pay.forgetWallet(walletId),
    config,
  });
  const expiredReservations = new ExpiredReservationSweeper(knex, metrics, clock, { onReleased: pay.forgetWallet });
  return { pay, settlements, expiredReservations };
}

/** The wings above the core and the pay wing: PATs, agents, sign-in, histories, sellers. */
function buildWings(deps: TreasuryAppDeps, core: Core) {
  const payWing = buildPayWing(core);
  const { pay } = payWing;
  const { config, knex, log, clock, metrics, chains, platformStores, accounts, balances, walletHistoryStore, wallets } =
    core;
  const pats = new PatService({ store: platformStores.pats, metrics, clock, maxPats: config.maxPats });
  const agents = new AgentService({
    store: platformStores.agents,
    accounts,
    wallets: agentWalletsOf(wallets, config.walletBounds),
    clock,
    maxAgents: config.maxAgentsPerAccount,
  });
  const identity = new IdentityService({
    store: pgIdentityStore(knex),
    agents,
    metrics,
    options: {
      publicUrl: config.publicUrl,
      sessionTtlSeconds: config.sessionTtlSeconds,
      clock,
      evmChainIds: chains.chains.map((c) => c.chainId),
    },
  });
  const paymentHistory = new PaymentHistoryService(walletHistoryStore, clock);
  const walletHistory = new WalletHistoryService(walletHistoryStore);
  const sellersWing = createSellersWing({
    config,
    knex,
    log,
    metrics,
    clock,
    chains,
    balances,
    chainReads: core.chainReads,
    accounts,
    wallets,
    pats,
    pay,
    resolveHost: deps.resolveHost,
  });
  const { ledgerVerifier } = sellersWing;
  return {
    ...payWing,
    pats,
    agents,
    identity,
    paymentHistory,
    walletHistory,
    sellersWing,
    ledgerVerifier,
  };
}

type Wings = ReturnType<typeof buildWings>;

/** Every router, in the order the app serves them: pay first, no router walked before it (test/unit/http/router-order.test.ts). */
function buildRouters(core: Core, wings: Wings, isShuttingDown: () => boolean) {
  const { config, knex, metrics, chains, signer, tokenAuth, payAuth, accounts, wallets, ownerPolicies } = core;
  const { pay, settlements, pats, agents, identity, paymentHistory, walletHistory, sellersWing } = wings;
  return [
    payRoutes({
      auth: payAuth,
      wallets,
      pay,
      settlements,
      ownerPolicies,
      admission: new PayAdmission(config.payAdmission, metrics),
      rateLimits: core.rateLimits,
      knex,
      chains,
      dashboardUrl: config.dashboardUrl,
    }),
    opsRoutes({
      knex,
      signer,
      metrics,
      isShuttingDown,
      publicUrl: config.publicUrl,
      catalog: API_CATALOG,
      metricsHere: config.metricsListener === undefined,
    }),
    docsRoutes(),
    treasuryRoutes({ auth: tokenAuth, accounts }),
    walletRoutes({ ...core, auth: tokenAuth, history: paymentHistory }), // receipts count in core.rateLimits
    walletHistoryRoutes({ auth: tokenAuth, wallets, knex, history: walletHistory }),
    identityRoutes({ auth: tokenAuth, identity, policyState: bearerPolicyState(knex) }),
    patRoutes({ auth: tokenAuth, pats }),
    agentRoutes({ auth: tokenAuth, agents, history: paymentHistory }),
    sellerRoutes({ auth: tokenAuth, pats, ...sellersWing }),
    gateRoutes({ auth: tokenAuth, gate: sellersWing.gate }),
    ...discoveryWingRoutes(core, tokenAuth, sellersWing.sellers.profiles),
    sandboxRoutes({ faucets: config.sandboxFaucets }),
  ];
}

/** The Koa app: the middleware in order, then every router; and the routes it serves (`{param}` form). */
function buildKoa(deps: TreasuryAppDeps, core: Core, routers: ReturnType<typeof buildRouters>) {
  const { config, log, metrics, rateLimits } = core;
  const koa = new Koa({ proxy: false });
  koa.use(requestContext(log, metrics));
  koa.use(errorHandler(log, metrics));
  koa.use(rateLimitByAddress(rateLimits, config.trustedProxies));
  koa.use(jsonBody({ limitBytes: config.bodyLimitBytes, ...config.jsonLimits }));
  koa.use(dashboardStatic(deps.dashboardDir ? { dir: deps.dashboardDir } : {}));
  for (const router of routers) {
    koa.use(router.routes());
    koa.use(router.allowedMethods());
  }
  koa.on('error', () => undefined); // rendered by errorHandler; socket errors are not actionable

  const served = routers.flatMap((router) =>
    router.stack.flatMap((layer) =>
      layer.methods
        .filter((m) => m !== 'HEAD')
        .map((method) => ({ method, path: String(layer.path).replace(/:([a-z_]+)/g, '{$1}') })),
    ),
  );
  return { koa, served };
}

export function createTreasuryApp(deps: TreasuryAppDeps): TreasuryApp {
  const core = buildCore(deps);
  const wings = buildWings(deps, core);
  const { config, metrics, rateLimits, signer, accounts, wallets } = core;
  const { pay, expiredReservations, ledgerVerifier } = wings;
  const { paymentIdSweeper, proofRechecker } = wings.sellersWing;
  let shuttingDown = false;
  let server: http.Server | undefined;
  let rateLimitCleanup: RepeatingTask | undefined;
  /** Resolves once the listening server closed and its last connection ended. */
  let drained: Promise<void> = Promise.resolve();

  const routers = buildRouters(core, wings, () => shuttingDown);
  const { koa, served } = buildKoa(deps, core, routers);

  const closeablesOf = (workers: readonly Closeable[] = []): Closeable[] => [
    // Readiness answers 503 from here on; the listening socket closes and idle keep-alive connections end.
    closeable(
      'http_stop_accepting',
      () => {
        shuttingDown = true;
        const s = server;
        if (!s) return;
        drained = new Promise<void>((resolve) => s.close(() => resolve()));
        s.closeIdleConnections();
      },
      1_000,
    ),
    // Requests in flight finish; connections still open after 10 s are cut.
    closeable(
      'http_drain',
      async () => {
        const cut = setTimeout(() => server?.closeAllConnections(), 10_000).unref();
        try {
          await drained;
        } finally {
          clearTimeout(cut);
        }
      },
      11_000,
    ),
    closeable('ledger_verifier', () => ledgerVerifier.stop(), 10_000),
    closeable('proof_rechecker', () => proofRechecker.stop(), 10_000),
    closeable('rate_limit_cleanup', () => rateLimitCleanup?.close(), 5_000),
    ...workers,
    closeable('pay_connections', () => pay.close(), 5_000),
    closeable('signer_client', () => signer.close(), 1_000),
  ];

  return {
    koa,
    metrics,
    routes: served,
    services: { accounts, wallets, pay, signer, expiredReservations, ledgerVerifier, paymentIdSweeper, proofRechecker },
    listen(port, host) {
      return new Promise((resolve, reject) => {
        const serverOptions = { maxHeaderSize: 16 * 1024, requestTimeout: 30_000 };
        // With TREASURY_TLS_CERT_FILE/_KEY_FILE the API terminates TLS itself; otherwise plain HTTP (a TLS proxy in front).
        const s: http.Server = config.tls
          ? https.createServer({ ...serverOptions, cert: config.tls.cert, key: config.tls.key }, koa.callback())
          : http.createServer(serverOptions, koa.callback());
        s.once('error', reject);
        s.listen(port, host, () => {
          server = s;
          ledgerVerifier.start();
          proofRechecker.start();
          if (rateLimits.enabled)
            rateLimitCleanup = startRepeatingTask({
              name: 'rate_limit_cleanup',
              everyMs: 5 * 60_000,
              runAtStart: false,
              run: () =>
                rateLimits
                  .clearExpired()
                  .catch((err: unknown) =>
                    deps.log.warn({ err: describeError(err) }, 'rate limit clean-up failed; retried in 5 minutes'),
                  ),
            });
          resolve(s);
        });
      });
    },
    closeables: closeablesOf,
    close: () => closeInOrder(closeablesOf()),
  };
}

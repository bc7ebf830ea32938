/**
 * Seller middleware, one test per row of the runtime answers table (docs/seller-middleware.md) plus the
 * pass-through rules, against a real Koa app on an ephemeral port with a fake facilitator and platform. The
 * cases are the shared table (./status-table.ts), which the gate runs too
 * (test/integration/gate/gate-status-table.test.ts).
 */
import { describeStatusTable, TABLE_ROUTE_PRICES, type PaywallFront } from './status-table.js';
import { startSellerApp } from './x402-fakes.js';

const koaFront: PaywallFront = {
  name: 'x402 Koa middleware',
  async start(variant, { platform }) {
    const app = await startSellerApp({
      api_url: platform.url,
      route_prices: TABLE_ROUTE_PRICES,
      ...(variant.facilitatorUrl ? { facilitator_url: variant.facilitatorUrl } : {}),
      env: variant.env,
    });
    return {
      url: app.url,
      get handlerRuns() {
        return app.handlerRuns;
      },
      flush: () => app.middleware.flush(),
      stop: () => app.stop(),
    };
  },
  isPaywallCall: () => true,
  ledgerPaths: ['/v1/ledger', '/v1/ledger/batch'],
};

describe('x402 Koa middleware: runtime responses', () => {
  describeStatusTable(koaFront);
});

/**
 * The gate honours the paywall's runtime answers table exactly as the Koa middleware does: the same cases
 * (test/integration/x402-middleware/status-table.ts), run against a gate in front of an origin with no payment
 * code, seller routed by path prefix, fake facilitator and platform (catalogue and ledger).
 */
import { describeStatusTable, type PaywallFront } from '../x402-middleware/status-table.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue } from './gate-fakes.js';

const gateFront: PaywallFront = {
  name: 'gate',
  async start(variant, { platform }) {
    const origin = await startOrigin();
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/ledger', { status: 201, body: { id: 'led_1' } });
    const gate = await startTestGate(platform, {
      ...(variant.facilitatorUrl ? { FACILITATOR_URL: variant.facilitatorUrl } : {}),
      ...variant.env,
    });
    return {
      url: `${gate.url}/${GATE_SLUG}`,
      get handlerRuns() {
        return origin.runs;
      },
      flush: () => gate.app.ledger.flush(),
      stop: async () => {
        await gate.stop();
        await origin.stop();
      },
    };
  },
  isPaywallCall: (call) => call.path !== '/v1/gate/catalogue',
  ledgerPaths: ['/v1/gate/ledger', '/v1/gate/ledger/batch'],
};

describe('gate: runtime responses (the middleware table)', () => {
  describeStatusTable(gateFront);
});

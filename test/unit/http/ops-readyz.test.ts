/**
 * /readyz (src/api/http/routes/ops-routes.ts) asks the database and the signer; requests that arrive while a
 * check is in flight share it, so a burst of public probes is one check for the signer, and a probe after the
 * answer checks again (nothing is remembered past it).
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Knex } from 'knex';
import { opsRoutes } from '../../../src/api/http/routes/ops-routes.js';
import type { TreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import type { SignerGateway } from '../../../src/api/signing/signer-gateway.js';

describe('/readyz', () => {
  it('shares one check among the probes that arrive while it runs, and checks again after', async () => {
    let checks = 0;
    let signerUp = true;
    // The first check answers only once all twenty probes have reached the route (no timer: a busy machine may
    // spread their arrival over any time).
    const BURST = 20;
    let arrived = 0;
    let allArrived: () => void = () => undefined;
    const burstIn = new Promise<void>((resolve) => (allArrived = resolve));
    const signer = {
      healthy: async () => {
        checks++;
        if (checks === 1) await burstIn;
        return signerUp;
      },
    } as unknown as SignerGateway;
    const knex = { raw: async () => ({ rows: [] }) } as unknown as Knex;
    const app = new Koa();
    const router = opsRoutes({
      knex,
      signer,
      metrics: {} as TreasuryMetrics,
      isShuttingDown: () => false,
      publicUrl: 'http://127.0.0.1',
      catalog: [],
    });
    app.use(async (_ctx, next) => {
      if (++arrived === BURST) allArrived();
      await next();
    });
    app.use(router.routes());
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`;
      const burst = await Promise.all(Array.from({ length: BURST }, () => fetch(url).then((r) => r.status)));
      assert.deepEqual(
        burst,
        Array.from({ length: 20 }, () => 200),
      );
      assert.equal(checks, 1, 'twenty probes at once, one check');
      signerUp = false;
      const after = await fetch(url);
      assert.equal(after.status, 503, 'the next probe checks again');
      assert.equal(((await after.json()) as { signer: boolean }).signer, false);
      assert.equal(checks, 2);
    } finally {
      server.close();
    }
  });
});

/**
 * The order the API mounts its routers in (src/api/app.ts `buildRouters`): the pay routes first, so that a payment
 * walks past no other router's layers; and no path that one router serves is matched by a layer of another, so the
 * order decides which router a request reaches first and nothing else — a route is answered by the same handler,
 * with the same 405/501 `Allow` answers, whatever the order. A router added later with a path another router
 * already matches fails here. The app is built without a database (nothing here reaches one).
 */
import assert from 'node:assert/strict';
import type Router from '@koa/router';
import pino from 'pino';
import { createTreasuryApp, type TreasuryApp } from '../../../src/api/app.js';
import { loadAppConfig } from '../../../src/api/config/app-config.js';
import { createKnex } from '../../../src/api/db/knex-client.js';

type Layer = Router['stack'][number];

/** A path of the form the app uses: literal segments and `:name` parameters, each a whole segment. */
const SIMPLE_PATH = /^(\/([A-Za-z0-9._-]+|:[a-z_]+))+$/;

/** A path both layers' patterns would match, if there is one (a parameter takes the other's literal). */
function commonPath(a: string, b: string): string | undefined {
  const as = a.split('/');
  const bs = b.split('/');
  if (as.length !== bs.length) return undefined;
  const joined: string[] = [];
  for (let i = 0; i < as.length; i++) {
    const x = as[i]!;
    const y = bs[i]!;
    if (x.startsWith(':')) joined.push(y.startsWith(':') ? 'p' : y);
    else if (y.startsWith(':') || x === y) joined.push(x);
    else return undefined;
  }
  return joined.join('/');
}

describe('the order of the API routers', () => {
  let app: TreasuryApp;
  let knex: ReturnType<typeof createKnex>;
  /** The routers in the order the app mounted them, read off the middleware they gave it. */
  let routers: Router[];

  before(() => {
    const databaseUrl = 'postgres://nobody@127.0.0.1:9/none';
    const config = loadAppConfig({
      DATABASE_URL: databaseUrl,
      TREASURY_LOG_LEVEL: 'silent',
      TREASURY_PUBLIC_URL: 'http://treasury.test',
      TREASURY_SIGNER_SOCKET: '/nonexistent/signer.sock',
    });
    knex = createKnex(databaseUrl);
    app = createTreasuryApp({ config, knex, log: pino({ level: 'silent' }) });
    routers = app.koa.middleware
      .map((mw) => (mw as { router?: Router }).router)
      .filter((router): router is Router => router !== undefined);
  });

  after(async () => {
    await app.close();
    await knex.destroy();
  });

  it('mounts the router of POST /v1/wallets/{id}/pay first', () => {
    assert.ok(routers.length >= 10, `found ${routers.length} routers`);
    const first = routers[0]!.match('/v1/wallets/w_1/pay', 'POST');
    assert.equal(first.route, true, 'the first router does not serve a payment');
  });

  it('serves each path from one router only', () => {
    const layers = routers.flatMap((router, index) =>
      router.stack.filter((layer: Layer) => layer.methods.length > 0).map((layer: Layer) => ({ index, layer })),
    );
    assert.ok(layers.length >= 80, `found ${layers.length} routes`);
    for (const { layer } of layers) assert.match(String(layer.path), SIMPLE_PATH);
    const shared: string[] = [];
    for (const a of layers)
      for (const b of layers) {
        if (a.index >= b.index) continue;
        const path = commonPath(String(a.layer.path), String(b.layer.path));
        if (path !== undefined && a.layer.match(path) && b.layer.match(path))
          shared.push(
            `${path}: ${String(a.layer.path)} (router ${a.index}) and ${String(b.layer.path)} (router ${b.index})`,
          );
      }
    assert.deepEqual(shared, [], `paths matched by two routers:\n${shared.join('\n')}`);
  });

  it('finds a path two routers would share, when there is one', () => {
    assert.equal(commonPath('/v1/wallets/:id/pay', '/v1/wallets/batch/:op'), '/v1/wallets/batch/pay');
    assert.equal(commonPath('/v1/wallets/:id', '/v1/wallets/:id/pay'), undefined);
    assert.equal(commonPath('/v1/wallets/:id/pay', '/v1/wallets/:id/transfer'), undefined);
  });
});

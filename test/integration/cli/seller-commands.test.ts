/**
 * The seller commands that change something, each run through the real `xx` binary (node bin/xx.mjs, no
 * TTY) against a real test Treasury, and each checked through the API rather than by its exit code alone:
 * `refresh` (the OpenAPI document's new operation becomes an endpoint), `endpoints price` and `endpoints
 * update` (the endpoint as the API lists it), `payout-mode set` (the seller's payout mode), `service banking
 * set` (the banking state), `service suspend`/`resume` (the middleware's /v1/auth/verify refuses, then
 * answers) and `service pat revoke` (the revoked PAT is refused by the API at once); `service switch` (the
 * next command changes the service switched to on the platform, not the other one).
 * test/unit/cli/every-command-run.test.ts fails when a command of the tree is run by no CLI suite.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { TestTreasury } from '../../support/api-harness.js';
import { assertOk, runXx, startForwardedTreasury, type Forwarder, stdoutJson, xxHomeFor } from './xx-process.js';
import { openApiDocHandler } from '../../support/loopback-servers.js';

describe('xx seller commands that change state (CLI subprocess, HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  let t: TestTreasury;
  let forwarder: Forwarder;
  let env: Record<string, string> & { HOME: string };
  let docServer: http.Server;
  let docUrl: string;
  let doc: Record<string, unknown>;

  const json = async (args: string[]) => stdoutJson(await runXx([...args, '--json'], env), args.join(' '));
  /** Reads what the platform holds for a seller with the service PAT `service init` stored for it (the agent's
   * exchanged session reads no sellers, as its PAT may not). */
  const asService = (sellerId: string, path = '') =>
    t.request('GET', `/v1/sellers/${sellerId}${path}`, {
      token: JSON.parse(fs.readFileSync(`${env.XX_SERVICES_DIR}/${sellerId}.json`, 'utf8')).pat,
    });

  before(async () => {
    ({ forwarder, t } = await startForwardedTreasury());
    env = xxHomeFor('seller-commands', forwarder.url, 'seller commands passphrase');
    docServer = http.createServer(openApiDocHandler(() => doc));
    await new Promise<void>((r) => docServer.listen(0, '127.0.0.1', () => r()));
    docUrl = `http://127.0.0.1:${(docServer.address() as { port: number }).port}/openapi.json`;
    doc = { openapi: '3.1.0', paths: { '/search': { get: { operationId: 'search', 'x-price-usd': '0.05' } } } };
    assertOk(await runXx(['init', '--new-seed', '--chain', 'base', '--json'], env), 'init');
  });
  after(async () => {
    docServer?.close();
    await forwarder?.close();
    await t?.stop();
    if (env?.HOME) fs.rmSync(env.HOME, { recursive: true, force: true });
  });

  it('refresh, endpoints price/update, payout-mode set, banking set, suspend/resume and pat revoke take effect on the platform', async () => {
    const created = await json(['service', 'init', '--name', 'Lifecycle Co', '--openapi-url', docUrl]);
    const sellerId = created.seller_id as string;
    assert.deepEqual(created.ingest.added, ['search']);
    const seller = (path = '') => asService(sellerId, path);
    const endpoints = async () => (await seller('/endpoints')).body.endpoints as Array<Record<string, any>>;

    // refresh: a new operation in the document becomes an endpoint on the platform.
    doc = {
      openapi: '3.1.0',
      paths: {
        '/search': { get: { operationId: 'search', 'x-price-usd': '0.05' } },
        '/forecast': { get: { operationId: 'forecast', 'x-price-usd': '0.02' } },
      },
    };
    const refreshed = await json(['refresh']);
    assert.deepEqual([refreshed.added, refreshed.changed, refreshed.removed], [['forecast'], [], []]);
    const refreshText = assertOk(await runXx(['refresh'], env), 'refresh');
    assert.match(refreshText.stdout, /added 0, changed 0, removed 0, kept for ledger 0, unchanged 2/);
    const forecast = (await endpoints()).find((e) => e.slug === 'forecast');
    assert.equal(forecast?.price, '0.02');

    // endpoints price / update: the API lists the new price, method, pattern and route prices.
    const priced = await json(['endpoints', 'price', forecast!.endpoint_id, '$0.25']);
    assert.equal(priced.price, '0.25');
    assert.equal((await endpoints()).find((e) => e.endpoint_id === forecast!.endpoint_id)?.price, '0.25');
    await json([
      'endpoints',
      'update',
      forecast!.endpoint_id,
      '--method',
      'post',
      '--path-pattern',
      '/forecast/{city}',
      '--route-price',
      '/forecast/paris=0.5',
    ]);
    const updated = (await endpoints()).find((e) => e.endpoint_id === forecast!.endpoint_id)!;
    assert.deepEqual(
      [updated.method, updated.path_pattern, updated.route_prices, updated.price],
      ['POST', '/forecast/{city}', { '/forecast/paris': '0.5' }, '0.25'],
    );
    await json(['endpoints', 'update', forecast!.endpoint_id, '--path-pattern', '']);
    assert.equal(
      (await endpoints()).find((e) => e.endpoint_id === forecast!.endpoint_id)?.path_pattern,
      null,
      'an empty --path-pattern clears it',
    );

    // payout-mode set: the seller's mode on the platform.
    assert.deepEqual(await json(['payout-mode', 'set', 'platform_mor']), {
      seller_id: sellerId,
      payout_mode: 'platform_mor',
    });
    assert.equal((await seller()).body.payout_mode, 'platform_mor');
    assert.equal((await runXx(['payout-mode', 'set', 'sometimes'], env)).code, 2);

    // service banking set: declared on the platform, country upper-cased.
    const banking = await json(['service', 'banking', 'set', '--legal-entity', 'Lifecycle GmbH', '--country', 'de']);
    assert.deepEqual(banking, {
      seller_id: sellerId,
      legal_entity: 'Lifecycle GmbH',
      country: 'DE',
      state: 'declared',
    });
    assert.deepEqual((await seller('/banking')).body, banking);
    assert.equal((await seller()).body.banking_state, 'declared');

    // service suspend / resume: the middleware's verify call is refused while suspended.
    const minted = await json(['service', 'pat', 'create', '--label', 'middleware']);
    const verifyAsMiddleware = () => t.request('POST', '/v1/auth/verify', { token: minted.pat });
    assert.equal((await verifyAsMiddleware()).status, 200);
    assert.equal((await json(['service', 'suspend'])).status, 'suspended');
    assert.equal((await seller()).body.status, 'suspended');
    assert.equal((await verifyAsMiddleware()).body.error_code, 'seller_suspended');
    assert.match(assertOk(await runXx(['service', 'resume'], env), 'service resume').stdout, /^Resumed Lifecycle Co/);
    assert.equal((await seller()).body.status, 'active');
    const verified = await verifyAsMiddleware();
    assert.equal(verified.status, 200);
    assert.equal(verified.body.endpoints.length, 2);

    // service pat revoke: the PAT is refused by the API from then on.
    const revoked = await json(['service', 'pat', 'revoke', minted.id]);
    assert.equal(revoked.id, minted.id);
    assert.ok(revoked.revoked_at);
    assert.equal(revoked.local_record_pat, false);
    assert.equal((await verifyAsMiddleware()).status, 401);
    assert.ok(
      (await t.db.knex('api_tokens').where({ id: minted.id }).first('revoked_at')).revoked_at,
      'revoked in the database',
    );
    assert.equal((await runXx(['service', 'pat', 'revoke', 'not-a-pat'], env)).code, 2);
  });

  it('service switch makes another local service the one later commands act on', async () => {
    const first = await json(['service', 'init', '--name', 'Switch One']);
    const second = await json(['service', 'init', '--name', 'Switch Two']);
    const status = async (id: string) => (await asService(id)).body.status as string;
    assert.equal((await json(['service', 'show'])).seller_id, second.seller_id, 'init makes the new service active');

    const switched = await json(['service', 'switch', first.slug]);
    assert.deepEqual([switched.seller_id, switched.active, switched.pat], [first.seller_id, true, undefined]);
    // The next command acts on the service switched to: suspend reaches the platform for it, not the other.
    assert.equal((await json(['service', 'suspend'])).seller_id, first.seller_id);
    assert.deepEqual([await status(first.seller_id), await status(second.seller_id)], ['suspended', 'active']);
    assert.equal((await json(['service', 'switch', second.seller_id])).seller_id, second.seller_id);
    assert.equal((await json(['payout-mode', 'set', 'platform_mor'])).seller_id, second.seller_id);
    const modes = await Promise.all([first, second].map(async (s) => (await asService(s.seller_id)).body.payout_mode));
    assert.deepEqual(modes, ['direct', 'platform_mor']);
    assert.equal((await runXx(['service', 'switch', 'no-such-service'], env)).code, 2);
  });
});

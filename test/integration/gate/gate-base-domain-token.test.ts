/**
 * A gate with GATE_BASE_DOMAIN names it to the platform with its public address (`base_domain`), and serves the
 * account's token at /.well-known/xx-gate-verification.txt on every `<label>.<GATE_BASE_DOMAIN>` host — a random
 * label the platform picks included — before the label is read as a slug (src/gate/gate-server.ts); any other path
 * on such a name is still routed by host. The proof is tried again while the domain is not proven.
 */
import assert from 'node:assert/strict';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { GATE_SLUG, startOrigin, startTestGate, tableCatalogue, type TestGate, type TestOrigin } from './gate-fakes.js';
import { rawExchange } from './raw-http.js';

const TOKEN = `xx-gate-${'ab'.repeat(16)}`;
const PATH = '/.well-known/xx-gate-verification.txt';

/** The platform's view of the address, as the API answers it. */
function view(body: { url: string; network: string; base_domain?: string }, domainVerified: boolean) {
  return {
    account_id: 'acct_000000000000000000000001',
    url: body.url,
    network: body.network,
    path: PATH,
    token: TOKEN,
    verified_at: '2026-12-03T12:00:00.000Z',
    base_domain: body.base_domain ?? null,
    base_domain_verified_at: domainVerified ? '2026-12-03T12:00:00.000Z' : null,
  };
}

describe('gate: the token at any name under GATE_BASE_DOMAIN', function () {
  this.timeout(30_000);
  let facilitator: FakeServer;
  let platform: FakeServer;
  let origin: TestOrigin;
  let gate: TestGate | undefined;
  let named: { url: string; network: string; base_domain?: string } | undefined;
  let domainVerified = false;

  beforeEach(async () => {
    ({ facilitator, platform } = await startFakes());
    origin = await startOrigin();
    named = undefined;
    domainVerified = false;
    platform.on('/v1/gate/catalogue', { status: 200, body: tableCatalogue(origin.url) });
    platform.on('/v1/gate/address', (call) => {
      named = call.body as typeof named;
      return { status: 200, body: view(named!, false) };
    });
    platform.on('/v1/gate/address/verify', () => ({
      status: 200,
      body: {
        ...view(named!, domainVerified),
        ...(domainVerified ? {} : { base_domain_error: 'gate_verification_not_found' }),
      },
    }));
  });
  afterEach(async () => {
    await gate?.stop();
    gate = undefined;
    await Promise.all([origin.stop(), facilitator.stop(), platform.stop()]);
  });

  const get = (target: string, host: string) => rawExchange(gate!.url, { target, headers: { Host: host } });

  it('names its base domain, serves the token at a random label and at a slug, routes the rest by host', async () => {
    gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_BASE_DOMAIN: 'gate.test',
      GATE_PUBLIC_URL: 'https://gate.test:8443',
    });
    await gate.app.address!.first;
    assert.deepEqual(named, { url: 'https://gate.test:8443', network: 'eip155:84532', base_domain: 'gate.test' });

    for (const host of [
      '0123456789abcdef0123.gate.test',
      '0123456789abcdef0123.gate.test:8443',
      `${GATE_SLUG}.gate.test`,
    ]) {
      const answer = await get(PATH, host);
      assert.equal(answer.status, 200, `${host}: ${answer.status} ${answer.body}`);
      assert.equal(answer.body, `${TOKEN}\n`, host);
      assert.equal(answer.headers['cache-control'], 'no-store');
    }
    // The gate's own name, by path: as before.
    assert.equal((await get(PATH, 'gate.test:8443')).body, `${TOKEN}\n`);
    // Nothing else of the gate's own routes is answered on a host-routed name, nor the token by another method.
    assert.equal((await get('/readyz', '0123456789abcdef0123.gate.test')).status, 404);
    assert.equal(
      (await rawExchange(gate.url, { method: 'POST', target: PATH, body: '', headers: { Host: 'x1.gate.test' } }))
        .status,
      404,
    );
    // A random label names no seller: any other path there is 404; the slug's other paths are sold by host.
    const unknown = await get('/paid', '0123456789abcdef0123.gate.test');
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body).error_code, 'gate_seller_not_found');
    assert.equal((await get('/paid', `${GATE_SLUG}.gate.test`)).status, 402);
    assert.equal(origin.runs, 0, 'the origin saw none of it');
  });

  it('before the platform issued a token: 404 at a random label as at the gate’s own name', async () => {
    platform.on('/v1/gate/address', { status: 503, body: { error_code: 'unavailable' } });
    gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_BASE_DOMAIN: 'gate.test',
      GATE_PUBLIC_URL: 'https://gate.test',
    });
    await gate.app.address!.first;
    assert.equal((await get(PATH, 'a1b2c3d4e5f6a7b8c9d0.gate.test')).status, 404);
    assert.equal((await get(PATH, 'gate.test')).status, 404);
  });

  it('the URL verified alone is kept and the proof tried again until the domain is proven', async () => {
    gate = await startTestGate(platform, {
      FACILITATOR_URL: facilitator.url,
      GATE_BASE_DOMAIN: 'gate.test',
      GATE_PUBLIC_URL: 'https://gate.test',
      GATE_REFRESH_MS: '1000',
    });
    await gate.app.address!.first;
    assert.ok(gate.app.address!.verified?.verified_at, 'the URL is verified');
    assert.equal(gate.app.address!.verified?.base_domain_verified_at, null);
    const calls = platform.callsTo('/v1/gate/address/verify').length;
    domainVerified = true;
    const deadline = Date.now() + 5_000;
    while (!gate.app.address!.verified?.base_domain_verified_at && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.ok(gate.app.address!.verified?.base_domain_verified_at, 'proven on a later attempt');
    assert.ok(platform.callsTo('/v1/gate/address/verify').length > calls);
  });

  it('without GATE_BASE_DOMAIN: names no base domain, and host names route nothing', async () => {
    gate = await startTestGate(platform, { FACILITATOR_URL: facilitator.url, GATE_PUBLIC_URL: 'https://gate.test' });
    await gate.app.address!.first;
    assert.deepEqual(named, { url: 'https://gate.test', network: 'eip155:84532' });
    // Not host-routed: the path is the gate's own route, whatever the Host.
    assert.equal((await get(PATH, 'x1.gate.test')).body, `${TOKEN}\n`);
  });
});

/**
 * Gate sellers in the public catalogue, against the real platform (HTTP API, PostgreSQL, SoftHSM) and a real
 * in-process gate: the gate proves its public address (GATE_PUBLIC_URL on loopback; the platform fetches
 * /.well-known/xx-gate-verification.txt from it), then the official Bazaar client
 * (`withBazaar(new HTTPFacilitatorClient({ url }))`) lists the account's active managed-proxy seller at
 * `<gate URL>/<slug><route>` with the gate's terms; a buyer paying that very URL gets 200, and the uptime the gate
 * reported shows on the resource. Not listed: before the address is proven, after it changes, a suspended seller,
 * and an account that names another account's gate (its token is not there).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { withBazaar } from '@x402/extensions/bazaar';
import { encodePaymentPayload } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { signExactPayment } from '../../unit/x402/x402-fixtures.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { registerSeller, type ListedSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { startTestGate, type TestGate } from './gate-fakes.js';

/** The catalogue's network (the API's default chain) and the test gate's (GATE_NETWORK's default). */
const NETWORK = 'eip155:84532';

/** A loopback port free right now (the gate must know its public URL before it listens). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Listed {
  resource: string;
  accepts: Array<{ payTo: string; amount: string }>;
  treasury: { seller_id: string; uptime?: { ratio: number; samples: number } };
}

describe('gate listing: sellers sold through a proven gate address are in discovery, payable there', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ extraEnv: { TREASURY_DISCOVERY_CACHE_MS: '0' } });
  const servers = new LoopbackServers();
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  let gate: TestGate | undefined;
  const bazaar = () => withBazaar(new HTTPFacilitatorClient({ url: t.baseUrl })).extensions.bazaar;
  const listed = async () => (await bazaar().listResources({ limit: 100 })).items as unknown as Listed[];
  const listingOf = async (s: ListedSeller) => (await listed()).filter((i) => i.treasury.seller_id === s.seller_id);

  before(async () => {
    fakes = await startFakes();
  });
  after(async () => {
    await gate?.stop();
    await servers.closeAll();
    await Promise.all([fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  it('lists the gate seller at the verified gate URL; the listed URL is payable; uptime shows', async () => {
    const owner = await signInWithNewKey(t);
    const sunny = (_req: unknown, res: { end(body: string): void }) => res.end('sunny');
    const weather = await registerSeller(t, servers, owner.session, 'Gated Weather', {
      endpoints: { 'GET /forecast': '0.01' },
      protocol: 'mpp',
      serve: sunny as never,
    });
    const suspended = await registerSeller(t, servers, owner.session, 'Gated Suspended', {
      endpoints: { 'GET /forecast': '0.01' },
      protocol: 'mpp',
    });
    const off = await t.request('POST', `/v1/sellers/${suspended.seller_id}/suspend`, { token: owner.session });
    assert.equal(off.body.status, 'suspended');
    const gatePat = (await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'gate' } })).body
      .pat as string;
    const reasons = async (s: ListedSeller, session = owner.session) =>
      (await t.request('GET', `/v1/sellers/${s.seller_id}/discovery`, { token: session })).body.endpoints[0];

    // Before any proof: not listed, and the seller's view says why.
    assert.deepEqual(await listingOf(weather), []);
    assert.deepEqual((await reasons(weather)).reasons, ['gate_address_not_verified']);

    const port = await freePort();
    const gateUrl = `http://127.0.0.1:${port}`;
    gate = await startTestGate(
      { url: t.baseUrl },
      {
        GATE_TOKEN: gatePat,
        FACILITATOR_URL: fakes.facilitator.url,
        GATE_PORT: String(port),
        GATE_PUBLIC_URL: gateUrl,
      },
    );
    await gate.app.address!.first;
    const address = await t.request('GET', '/v1/gate/address', { token: gatePat });
    assert.equal(address.status, 200, JSON.stringify(address.body));
    assert.equal(address.body.url, gateUrl);
    assert.equal(address.body.network, NETWORK, 'the gate names the network it sells on');
    assert.ok(address.body.verified_at, 'the platform fetched the token from the gate');
    const served = await fetch(`${gateUrl}/.well-known/xx-gate-verification.txt`);
    assert.equal((await served.text()).trim(), address.body.token);

    const [resource, ...more] = await listingOf(weather);
    assert.equal(more.length, 0);
    assert.equal(resource!.resource, `${gateUrl}/${(await sellerSlug(weather)).slug}/forecast`);
    assert.deepEqual(await listingOf(suspended), [], 'a suspended seller is not listed');
    const view = await reasons(weather);
    assert.deepEqual([view.listed, view.reasons], [true, []], "the seller's view agrees");

    // The listed URL is the gate's: its challenge names the listed terms, and a payment there is served.
    const challenge = await fetch(resource!.resource);
    assert.equal(challenge.status, 402);
    const terms = ((await challenge.json()) as PaymentRequired).accepts[0]!;
    assert.equal(terms.payTo.toLowerCase(), resource!.accepts[0]!.payTo.toLowerCase());
    assert.equal(terms.amount, resource!.accepts[0]!.amount);
    const paid = await fetch(resource!.resource, {
      headers: { 'PAYMENT-SIGNATURE': encodePaymentPayload(await signExactPayment(terms)) },
    });
    assert.equal(paid.status, 200);
    assert.equal(await paid.text(), 'sunny');

    // The gate's uptime report reaches the listed resource.
    await gate.app.uptime.reporter.flush();
    const [after] = await listingOf(weather);
    assert.deepEqual(
      [after!.treasury.uptime?.ratio, after!.treasury.uptime?.samples],
      [1, 1],
      JSON.stringify(after!.treasury),
    );

    // A gate selling on another network than the catalogue's is not listed there (its terms would not be the gate's).
    const elsewhere = { url: gateUrl, network: 'eip155:8453' };
    const onBase = await t.request('POST', '/v1/gate/address', { token: gatePat, body: elsewhere });
    assert.ok(onBase.body.verified_at, 'the same address stays proven');
    assert.deepEqual(await listingOf(weather), []);
    await t.request('POST', '/v1/gate/address', { token: gatePat, body: { url: gateUrl, network: NETWORK } });
    assert.equal((await listingOf(weather)).length, 1);

    // A changed address is unproven until the gate proves it again.
    const moved = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: 'http://127.0.0.1:9', network: NETWORK },
    });
    assert.equal(moved.body.verified_at, null);
    assert.deepEqual(await listingOf(weather), []);
    await gate.app.address!.attempt();
    assert.equal((await listingOf(weather)).length, 1, 'proven again by the gate');

    // Another account naming this gate's address cannot prove it: the file holds the other account's token.
    const other = await signInWithNewKey(t);
    const theirs = await registerSeller(t, servers, other.session, 'Borrowed Gate', {
      endpoints: { 'GET /forecast': '0.01' },
      protocol: 'mpp',
    });
    const theirPat = (await t.request('POST', '/v1/pats', { token: other.session, body: { scope_type: 'gate' } })).body
      .pat as string;
    // An address where nothing serves the file is not proven either.
    await t.request('POST', '/v1/gate/address', { token: theirPat, body: { url: theirs.origin, network: NETWORK } });
    const absent = await t.request('POST', '/v1/gate/address/verify', { token: theirPat });
    assert.equal(absent.body.error_code, 'gate_verification_not_found', JSON.stringify(absent.body));
    const named = await t.request('POST', '/v1/gate/address', {
      token: theirPat,
      body: { url: gateUrl, network: NETWORK },
    });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.notEqual(named.body.token, address.body.token, 'a token per account');
    const stolen = await t.request('POST', '/v1/gate/address/verify', { token: theirPat });
    assert.equal(stolen.status, 409);
    assert.equal(stolen.body.error_code, 'gate_verification_token_mismatch');
    assert.deepEqual(await listingOf(theirs), []);
    assert.deepEqual((await reasons(theirs, other.session)).reasons, ['gate_address_not_verified']);
  });

  async function sellerSlug(s: ListedSeller): Promise<{ slug: string }> {
    const res = await t.request('GET', `/v1/sellers/${s.seller_id}`, { token: s.pat });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { slug: string };
  }
});

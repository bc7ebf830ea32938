/**
 * A gate's host-routed names, proven and payable through Treasury: the real API (HTTP, PostgreSQL, SoftHSM), a real
 * in-process gate with GATE_BASE_DOMAIN, the buyer SDK with a Treasury wallet, and an injected resolver standing in
 * for DNS (`gate.test` and, once its wildcard record exists, every name under it → 127.0.0.1).
 * - The gate names its base domain with its public address; the platform proves the URL, then the domain at a
 *   random label under it. Without the wildcard record the URL is verified and the domain is not (independent):
 *   a buyer paying the seller at `<slug>.gate.test` is refused 403 `challenge_origin_not_seller` (nothing signed),
 *   while the path-prefix address is paid.
 * - Once the domain is proven, a buyer paying at `<slug>.gate.test:<port>` is paid and served.
 * - A different base domain is unproven until the gate proves its own again; another account naming this gate's
 *   address proves nothing (its token is not there); a server that answers the token for one fixed name only does
 *   not prove a domain (a fresh random label each time).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { HostResolver } from '../../../src/api/net/vetted-fetch.js';
import { createX402Buyer, TreasuryApiError, TreasuryClient } from '../../../src/sdk/index.js';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';
import { registerSeller, type ListedSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { startFakes, type FakeServer } from '../x402-middleware/x402-fakes.js';
import { startTestGate, type TestGate } from './gate-fakes.js';

const NETWORK = 'eip155:84532';
const BASE = 'gate.test';
/** Another domain, whose every name resolves, where one server answers the token at one fixed name only. */
const OTHER = 'other.test';
const PATH = '/.well-known/xx-gate-verification.txt';
const LOOPBACK = [{ address: '127.0.0.1', family: 4 as const }];

/** DNS as the test sets it: `gate.test` always, names under it once `wildcard` is on; `other.test` and all under it. */
const dns = { wildcard: false };
const resolveHost: HostResolver = async (hostname) => {
  if (hostname === BASE || (dns.wildcard && hostname.endsWith(`.${BASE}`))) return LOOPBACK;
  if (hostname === OTHER || hostname.endsWith(`.${OTHER}`)) return LOOPBACK;
  throw new Error('ENOTFOUND');
};

/** A loopback port free right now (the gate must know its public URL before it listens). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The buyer's fetch: any host name connects to 127.0.0.1, the URL's host kept as Host (a browser's view of DNS). */
const loopbackFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  new Promise((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init?.headers ?? {}).entries());
    const lookup = (_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
      options.all ? callback(null, LOOPBACK) : callback(null, '127.0.0.1', 4);
    const req = http.request(url, { method: init?.method ?? 'GET', headers, lookup: lookup as never }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, v);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 500, headers: answer }));
      });
    });
    req.on('error', reject);
    req.end(typeof init?.body === 'string' ? init.body : undefined);
  });

describe("gate host-routed names: the base domain proven, a Treasury wallet's payment there is not refused", function () {
  this.timeout(240_000);
  const t = useTestTreasury({ resolveHost });
  const servers = new LoopbackServers();
  let fakes: { facilitator: FakeServer; platform: FakeServer };
  let gate: TestGate | undefined;
  let owner: { session: string };
  let gatePat: string;
  let port: number;
  let gateUrl: string;
  /** Sold through the gate: `early` paid while the domain is unproven, `late` once it is. */
  let early: ListedSeller & { slug: string };
  let late: ListedSeller & { slug: string };
  let client: TreasuryClient;
  let walletId: string;

  const slugOf = async (s: ListedSeller) =>
    (await t.request('GET', `/v1/sellers/${s.seller_id}`, { token: s.pat })).body.slug as string;
  const newPat = async (session: string) =>
    (await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'gate' } })).body.pat as string;
  const authorizations = () => t.db.knex('authorizations').where({ wallet_id: walletId }).select('id');
  const buyer = () => createX402Buyer({ client, walletId, maxPriceUsd: '0.05', fetch: loopbackFetch });

  before(async () => {
    fakes = await startFakes();
    owner = await signInWithNewKey(t);
    const sunny: http.RequestListener = (_req, res) => res.end('sunny');
    for (const name of ['Early Weather', 'Late Weather']) {
      const seller = await registerSeller(t, servers, owner.session, name, {
        endpoints: { 'GET /forecast': '0.01' },
        protocol: 'mpp',
        serve: sunny,
      });
      const slug = await slugOf(seller);
      if (name === 'Early Weather') early = { ...seller, slug };
      else late = { ...seller, slug };
    }
    gatePat = await newPat(owner.session);
    port = await freePort();
    gateUrl = `http://${BASE}:${port}`;
    gate = await startTestGate(
      { url: t.baseUrl },
      {
        GATE_TOKEN: gatePat,
        FACILITATOR_URL: fakes.facilitator.url,
        GATE_PORT: String(port),
        GATE_PUBLIC_URL: gateUrl,
        GATE_BASE_DOMAIN: BASE,
        GATE_REFRESH_MS: '3600000',
        // A busy machine: the test's own attempts must not give up on the platform's answer.
        GATE_PLATFORM_TIMEOUT_MS: '30000',
      },
    );
    await gate.app.address!.first;
    const agent = await mintAgentKey(t, 'host-routed-buyer');
    client = new TreasuryClient({ apiUrl: t.baseUrl, token: agent });
    const wallet = await t.request('POST', '/v1/wallets', { token: agent, body: { policy: {} } });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    walletId = wallet.body.id as string;
  });
  after(async () => {
    await gate?.stop();
    await servers.closeAll();
    await Promise.all([fakes.facilitator.stop(), fakes.platform.stop()]);
  });

  it('without a wildcard record: the URL is verified, the base domain is not, and stays refused there', async () => {
    const address = await t.request('GET', '/v1/gate/address', { token: gatePat });
    assert.equal(address.status, 200, JSON.stringify(address.body));
    assert.deepEqual([address.body.url, address.body.base_domain], [gateUrl, BASE]);
    assert.ok(address.body.verified_at, 'the URL is verified');
    assert.equal(address.body.base_domain_verified_at, null, 'no name under gate.test resolves yet');
    assert.ok(gate!.app.address!.verified?.verified_at);

    const err = await buyer()
      .request(`http://${early.slug}.${BASE}:${port}/forecast`)
      .then(
        (r) => assert.fail(`paid at an unproven host-routed name: ${r.status} ${r.body}`),
        (e: unknown) => e,
      );
    assert.ok(err instanceof TreasuryApiError, String(err));
    assert.deepEqual([err.status, err.code], [403, 'challenge_origin_not_seller']);
    assert.equal((err.body as { challenge_origin?: string }).challenge_origin, `http://${early.slug}.${BASE}:${port}`);
    assert.deepEqual(await authorizations(), [], 'nothing signed');

    // The URL's proof stands on its own: the path-prefix address is paid.
    const paid = await buyer().request(`${gateUrl}/${early.slug}/forecast`);
    assert.equal(paid.status, 200, paid.body);
    assert.deepEqual([paid.paid, paid.body], [true, 'sunny']);
  });

  it('once every name under it answers: the domain is proven and a payment at <slug>.<domain>:<port> is paid', async () => {
    dns.wildcard = true;
    await gate!.app.address!.attempt();
    const address = await t.request('GET', '/v1/gate/address', { token: gatePat });
    assert.ok(address.body.base_domain_verified_at, JSON.stringify(address.body));
    assert.ok(gate!.app.address!.verified?.base_domain_verified_at);

    const before = (await authorizations()).length;
    const paid = await buyer().request(`http://${late.slug}.${BASE}:${port}/forecast`);
    assert.equal(paid.status, 200, paid.body);
    assert.deepEqual([paid.paid, paid.body], [true, 'sunny']);
    assert.equal((await authorizations()).length, before + 1);
  });

  it('a different base domain is unproven until the gate proves its own again; a new URL clears both', async () => {
    const elsewhere = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: gateUrl, network: NETWORK, base_domain: 'elsewhere.test' },
    });
    assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
    assert.ok(elsewhere.body.verified_at, 'the URL stays verified');
    assert.equal(elsewhere.body.base_domain_verified_at, null);
    const none = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: gateUrl, network: NETWORK },
    });
    assert.deepEqual([none.body.base_domain, none.body.base_domain_verified_at], [null, null]);

    await gate!.app.address!.attempt();
    const proven = await t.request('GET', '/v1/gate/address', { token: gatePat });
    assert.ok(proven.body.base_domain_verified_at, JSON.stringify(proven.body));
    // Naming the same URL and domain again keeps both proofs.
    const same = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: gateUrl, network: NETWORK, base_domain: BASE },
    });
    assert.equal(same.body.base_domain_verified_at, proven.body.base_domain_verified_at);

    const moved = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: `http://${BASE}:9`, network: NETWORK, base_domain: BASE },
    });
    assert.deepEqual([moved.body.verified_at, moved.body.base_domain_verified_at], [null, null]);
    await gate!.app.address!.attempt();
    const back = await t.request('GET', '/v1/gate/address', { token: gatePat });
    assert.ok(back.body.verified_at && back.body.base_domain_verified_at, JSON.stringify(back.body));
  });

  it("another account naming this gate's address and domain proves neither", async () => {
    const other = await signInWithNewKey(t);
    const theirPat = await newPat(other.session);
    const named = await t.request('POST', '/v1/gate/address', {
      token: theirPat,
      body: { url: gateUrl, network: NETWORK, base_domain: BASE },
    });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    const verify = await t.request('POST', '/v1/gate/address/verify', { token: theirPat });
    assert.equal(verify.status, 409, JSON.stringify(verify.body));
    assert.equal(verify.body.error_code, 'gate_verification_token_mismatch');
    const [row] = await t.db.knex('gate_addresses').where({ account_id: named.body.account_id });
    assert.deepEqual([row.verified_at, row.base_domain_verified_at], [null, null]);
  });

  it('a server answering the token at one fixed name, not at every name, does not prove the domain', async () => {
    const other = await signInWithNewKey(t);
    const theirPat = await newPat(other.session);
    let token = '';
    const asked: string[] = [];
    const served = await servers.listen((req, res) => {
      const host = String(req.headers.host);
      asked.push(host);
      const name = host.slice(0, host.lastIndexOf(':'));
      if (req.url === PATH && (name === OTHER || name === `www.${OTHER}`)) return res.writeHead(200).end(`${token}\n`);
      res.writeHead(404).end();
    });
    const theirUrl = `http://${OTHER}:${new URL(served).port}`;
    const named = await t.request('POST', '/v1/gate/address', {
      token: theirPat,
      body: { url: theirUrl, network: NETWORK, base_domain: OTHER },
    });
    token = named.body.token as string;
    const labels: string[] = [];
    for (let i = 0; i < 2; i++) {
      asked.length = 0;
      const verify = await t.request('POST', '/v1/gate/address/verify', { token: theirPat });
      assert.equal(verify.status, 200, JSON.stringify(verify.body));
      assert.ok(verify.body.verified_at, 'the URL is proven');
      assert.equal(verify.body.base_domain_verified_at, null);
      assert.equal(verify.body.base_domain_error, 'gate_verification_not_found');
      assert.equal(asked.length, 2, asked.join(' '));
      const [label, under] = [asked[1]!.split('.')[0]!, asked[1]!.slice(asked[1]!.indexOf('.') + 1)];
      assert.match(label, /^[0-9a-f]{20}$/);
      assert.equal(under, `${OTHER}:${new URL(served).port}`, 'the URL’s port');
      labels.push(label);
    }
    assert.notEqual(labels[0], labels[1], 'a fresh label each time');
  });

  it("one account's concurrent verifications run one at a time: the calls that arrive during a run share the next", async () => {
    const other = await signInWithNewKey(t);
    const theirPat = await newPat(other.session);
    let token = '';
    const asked: string[] = [];
    // A slow gate: each answer after a second, so that the calls below arrive while the first run is running.
    const served = await servers.listen((req, res) => {
      asked.push(String(req.headers.host));
      setTimeout(() => {
        if (req.url === PATH) res.writeHead(200).end(`${token}\n`);
        else res.writeHead(404).end();
      }, 1000);
    });
    const theirUrl = `http://${OTHER}:${new URL(served).port}`;
    const named = await t.request('POST', '/v1/gate/address', {
      token: theirPat,
      body: { url: theirUrl, network: NETWORK, base_domain: OTHER },
    });
    token = named.body.token as string;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => t.request('POST', '/v1/gate/address/verify', { token: theirPat })),
    );
    for (const answer of answers) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.ok(answer.body.verified_at);
      assert.ok(answer.body.base_domain_verified_at, 'every name under other.test answers here');
    }
    // Two fetches a run (the URL's file, then one at a random label): the first call's run, then one run for all the
    // calls that arrived while it ran (each call of its own would have made twelve).
    assert.equal(asked.length, 4, asked.join(' '));
    // Once they ended, a new call runs anew.
    const again = await t.request('POST', '/v1/gate/address/verify', { token: theirPat });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(asked.length, 6, asked.join(' '));
  });

  it('the columns are bounded in PostgreSQL too (CHECK gate_addresses_base_domain_bounded)', async () => {
    const [row] = await t.db.knex('gate_addresses').whereNotNull('base_domain_verified_at').select('account_id');
    const set = (values: Record<string, unknown>) =>
      t.db.knex('gate_addresses').where({ account_id: row!.account_id }).update(values);
    // The last: 190 characters of good labels, one past what leaves room for a 63-character slug under it.
    const long = ['a'.repeat(63), 'a'.repeat(63), 'a'.repeat(62)].join('.');
    for (const base_domain of [
      '127.0.0.1',
      'localhost',
      'Gate.test',
      'gate.test.',
      '-a.test',
      'a'.repeat(250) + '.x',
      long,
    ])
      await assert.rejects(set({ base_domain }), /gate_addresses_base_domain_bounded/, base_domain);
    await assert.rejects(set({ base_domain: null }), /gate_addresses_base_domain_bounded/, 'a proof without a domain');
    await set({ base_domain: null, base_domain_verified_at: null });
    await set({ base_domain: BASE });
  });
});

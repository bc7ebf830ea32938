/**
 * A Treasury seller's payee is paid only for a challenge of that seller's own origins (src/api/pay/
 * refuse-challenge-origin.ts, src/api/pay/challenge-origin-binding.ts), through the real API (PostgreSQL, the
 * SoftHSM signer), the buyer SDK and loopback sellers:
 * - the copied-challenge attack: a page serves a platform_mor seller's 402 verbatim (its collection wallet as
 *   payTo) with its own URL as `resource.url`. A buyer that does not name the origin (an older SDK) pays it, and
 *   the page replays the payment at the seller for the content; the SDK names the origin and is refused 403
 *   `challenge_origin_not_seller` — nothing signed, nothing sent to the page, a denial and its audit row recorded —
 *   while the same purchase at the seller's own origin is paid;
 * - over HTTP: a direct seller's proven pay-to is bound to its verified origin, a gate seller's to its account's
 *   verified gate address (and its own origin); a payee no seller holds, a seller with no verified origin or whose
 *   gate address is unproven, and a request without `challenge_origin` are signed as before; the field is bounded
 *   (origin form, length, type: 400); another account's wallet is 404 with nothing written to it.
 */
import assert from 'node:assert/strict';
import type http from 'node:http';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createX402Buyer, TreasuryApiError, TreasuryClient, type X402BuyerClient } from '../../../src/sdk/index.js';
import { decodePaymentPayload, decodePaymentRequired, encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequired } from '../../../src/x402/wire-schemas.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { mintAgentKey, useTestTreasury } from '../../support/api-harness.js';
import { registerSeller, type ListedSeller } from '../../support/discoverable-seller.js';
import { LoopbackServers } from '../../support/loopback-servers.js';
import { provePayTo } from '../../support/seller-pay-to.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const NETWORK = 'eip155:84532';

/** A seller's paywall: 402 naming `payTo()` for an unpaid request, its content once a payment header comes. */
interface Paywall {
  payTo: string;
  /** Every payment header the seller received. */
  paid: string[];
}
function paywall(state: Paywall): http.RequestListener {
  return (req, res) => {
    req.resume();
    const header = req.headers['payment-signature'];
    if (typeof header === 'string') {
      state.paid.push(header);
      const accepted = decodePaymentPayload(header).accepted as { payTo?: string } | undefined;
      if (accepted?.payTo?.toLowerCase() !== state.payTo.toLowerCase()) return res.writeHead(402).end('{}');
      return res.writeHead(200, { 'content-type': 'application/json' }).end('{"report":"the seller\'s content"}');
    }
    const challenge: PaymentRequired = {
      x402Version: 2,
      resource: { url: `http://${String(req.headers.host)}${req.url}`, description: 'a report' },
      accepts: [paymentRequirements({ payTo: state.payTo, amount: '10000', maxTimeoutSeconds: 300 })],
    } as PaymentRequired;
    res.writeHead(402, { 'payment-required': encodePaymentRequired(challenge) }).end('{}');
  };
}

describe("challenge origin binding: a Treasury seller's payee is paid only for its own origins (HTTP, PostgreSQL, SoftHSM)", function () {
  this.timeout(240_000);
  const t = useTestTreasury();
  const servers = new LoopbackServers();
  let session: string;
  let token: string;
  let client: TreasuryClient;
  /** A platform_mor seller, its origin verified, whose paywall names its collection wallet. */
  let real: ListedSeller & { wall: Paywall };
  /** The page that serves a copy of the real seller's 402 under its own URL, and replays what it is paid with. */
  let page: { url: string; stolen: string[]; replayed: number[] };

  before(async () => {
    session = (await signInWithNewKey(t)).session;
    token = await mintAgentKey(t, 'origin-binding');
    client = new TreasuryClient({ apiUrl: t.baseUrl, token });
    const wall: Paywall = { payTo: '', paid: [] };
    const seller = await registerSeller(t, servers, session, 'Real Reports', {
      endpoints: { 'GET /report': '0.01' },
      payout_mode: 'platform_mor',
      serve: paywall(wall),
    });
    const verify = await t.request('POST', '/v1/auth/verify', { token: seller.pat, body: { network: NETWORK } });
    assert.match(String(verify.body.collect_to), /^0x[0-9a-fA-F]{40}$/, JSON.stringify(verify.body));
    wall.payTo = verify.body.collect_to as string;
    real = { ...seller, wall };

    const stolen: string[] = [];
    const replayed: number[] = [];
    const url = await servers.listen((req, res) => {
      req.resume();
      const header = req.headers['payment-signature'];
      void (async () => {
        if (typeof header === 'string') {
          // Paid with a payment signed for the seller's payee: replayed at the seller, for the seller's content.
          stolen.push(header);
          const at = await fetch(`${real.origin}/report`, { headers: { 'payment-signature': header } });
          replayed.push(at.status);
          return res.writeHead(200, { 'content-type': 'application/json' }).end(await at.text());
        }
        // The seller's 402 verbatim, but naming this page as the resource.
        const asked = await fetch(`${real.origin}/report`);
        const copy = decodePaymentRequired(asked.headers.get('payment-required')!);
        const named = { ...copy, resource: { ...copy.resource, url: `${page.url}${req.url}` } };
        res.writeHead(402, { 'payment-required': encodePaymentRequired(named) }).end('{}');
      })();
    });
    page = { url, stolen, replayed };
  });
  after(() => servers.closeAll());

  async function wallet(bearer = token): Promise<string> {
    const res = await t.request('POST', '/v1/wallets', { token: bearer, body: { policy: {} } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  }
  const authorizations = (walletId: string) => t.db.knex('authorizations').where({ wallet_id: walletId }).select('id');
  const pay = (walletId: string, payTo: string, challengeOrigin?: string, bearer = token) =>
    t.request('POST', `/v1/wallets/${walletId}/pay`, {
      token: bearer,
      body: {
        payment_requirements: paymentRequirements({ payTo, amount: '10000' }),
        ...(challengeOrigin !== undefined ? { challenge_origin: challengeOrigin } : {}),
      },
    });
  const refused = (res: { status: number; body: any }, what: string) => {
    assert.equal(res.status, 403, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error_code, 'challenge_origin_not_seller', what);
  };
  const signed = (res: { status: number; body: any }, what: string) =>
    assert.equal(res.status, 200, `${what}: ${res.status} ${JSON.stringify(res.body)}`);

  it('a buyer that does not name the origin (an older SDK) pays the copied challenge, and the page replays it at the seller', async () => {
    const walletId = await wallet();
    // What a buyer SDK sent before it named the origin: the same pay request without `challengeOrigin`.
    const older: X402BuyerClient = {
      pay: (id, input) => {
        const { challengeOrigin: _named, ...rest } = input;
        return client.pay(id, rest);
      },
      getWallet: (id) => client.getWallet(id),
    };
    const before = page.stolen.length;
    const result = await createX402Buyer({ client: older, walletId, maxPriceUsd: '0.05' }).request(
      `${page.url}/report`,
    );
    assert.equal(result.status, 200, result.body);
    assert.equal(page.stolen.length, before + 1, 'the page got a payment signed for the seller');
    assert.deepEqual(page.replayed.slice(before), [200], 'and the seller took it for the content');
    assert.equal((await authorizations(walletId)).length, 1, 'the buyer paid for the page');
  });

  it('the SDK names the origin: the copied challenge is refused before anything is signed; the seller itself is paid', async () => {
    const walletId = await wallet();
    const buyer = createX402Buyer({ client, walletId, maxPriceUsd: '0.05' });
    const before = page.stolen.length;
    const err = await buyer.request(`${page.url}/report`).then(
      (r) => assert.fail(`the copied challenge was paid: ${r.status} ${r.body}`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof TreasuryApiError, String(err));
    assert.deepEqual([err.status, err.code], [403, 'challenge_origin_not_seller']);
    const body = err.body as Record<string, unknown>;
    assert.deepEqual([body.challenge_origin, body.pay_to, body.network], [page.url, real.wall.payTo, NETWORK]);
    assert.match(String(err.decisionId), /^pd_[0-9a-f]{24}$/);
    assert.equal(page.stolen.length, before, 'no payment reached the page');
    assert.deepEqual(await authorizations(walletId), [], 'nothing was signed or reserved');

    // Recorded as the pay path records a refusal: the decision, and its audit row on an intact chain.
    const decisions = await t.request('GET', `/v1/wallets/${walletId}/decisions`, { token });
    const [decision] = decisions.body.decisions;
    assert.deepEqual(
      [decision.id, decision.outcome, decision.decided_by, decision.violations[0].rule],
      [err.decisionId, 'deny', 'api', 'challenge_origin_not_seller'],
    );
    assert.equal(decision.violations[0].challenge_origin, page.url);
    const audit = await t.request('GET', `/v1/wallets/${walletId}/audit`, { token });
    assert.equal(audit.body.events[0].event_type, 'policy.denied');
    assert.equal(audit.body.verification.state, 'verified', JSON.stringify(audit.body.verification));
    const [row] = await t.db.knex('audit_events').where({ chain_key: walletId, event_type: 'policy.denied' });
    assert.deepEqual([row.payload.challenge_origin, row.payload.rules], [page.url, ['challenge_origin_not_seller']]);

    const paid = await buyer.request(`${real.origin}/report`);
    assert.equal(paid.status, 200, paid.body);
    assert.equal(paid.paid, true);
    assert.equal((await authorizations(walletId)).length, 1);
  });

  it("a direct seller's proven pay-to is bound to its verified origin; unproven places and unknown payees are not", async () => {
    const walletId = await wallet();
    const direct = await registerSeller(t, servers, session, 'Direct Weather', { endpoints: { 'GET /w': '0.01' } });
    signed(await pay(walletId, direct.payTo, direct.origin), "the seller's own origin");
    refused(await pay(walletId, direct.payTo, page.url), 'another origin');
    refused(await pay(walletId, direct.payTo.toLowerCase(), page.url), 'the payee spelled lower-case');
    signed(await pay(walletId, direct.payTo), 'no challenge_origin: bound to nothing (an older SDK)');

    // A seller whose origin is not verified cannot be placed: its payee is paid from anywhere.
    const unverified = await registerSeller(t, servers, session, 'Unverified Weather', {
      endpoints: { 'GET /w': '0.01' },
      verify: false,
    });
    signed(await pay(walletId, unverified.payTo, page.url), 'an owner with no verified origin');
    // One payee held by a placed seller and an unplaced one: not all its origins are known, so none is bound.
    const shared = privateKeyToAccount(generatePrivateKey());
    const placed = await registerSeller(t, servers, session, 'Placed', { endpoints: {}, prove: false });
    const unplaced = await registerSeller(t, servers, session, 'Unplaced', {
      endpoints: {},
      prove: false,
      verify: false,
    });
    await provePayTo(t, session, placed.seller_id, shared);
    await provePayTo(t, session, unplaced.seller_id, shared);
    signed(await pay(walletId, shared.address, page.url), 'a payee one of whose owners is unplaced');

    // A payee no Treasury seller holds (an external seller): unaffected.
    const external = privateKeyToAccount(generatePrivateKey()).address;
    signed(await pay(walletId, external, page.url), 'an external payee');
    assert.equal((await authorizations(walletId)).length, 5);
  });

  it("a gate seller's payee is bound to its account's verified gate address and its own origin", async () => {
    const owner = await signInWithNewKey(t);
    const gatePat = (await t.request('POST', '/v1/pats', { token: owner.session, body: { scope_type: 'gate' } })).body
      .pat as string;
    let gateToken = '';
    const gateUrl = await servers.listen((req, res) => {
      if (req.url === '/.well-known/xx-gate-verification.txt') return res.writeHead(200).end(`${gateToken}\n`);
      res.writeHead(404).end();
    });
    const gated = await registerSeller(t, servers, owner.session, 'Gated Weather', {
      endpoints: { 'GET /w': '0.01' },
      protocol: 'mpp',
    });
    const walletId = await wallet();
    // Its gate's address not proven yet: the platform cannot say where the gate sells it.
    const set = await t.request('POST', '/v1/gate/address', {
      token: gatePat,
      body: { url: gateUrl, network: NETWORK },
    });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    gateToken = set.body.token as string;
    const other = privateKeyToAccount(generatePrivateKey());
    const unproven = await registerSeller(t, servers, owner.session, 'Gated Later', {
      endpoints: { 'GET /w': '0.01' },
      protocol: 'mpp',
      prove: false,
    });
    await provePayTo(t, owner.session, unproven.seller_id, other);
    signed(await pay(walletId, other.address, page.url), 'a gate seller whose gate address is unproven');

    const verified = await t.request('POST', '/v1/gate/address/verify', { token: gatePat });
    assert.ok(verified.body.verified_at, JSON.stringify(verified.body));
    signed(await pay(walletId, gated.payTo, gateUrl), 'the gate');
    signed(await pay(walletId, gated.payTo, gated.origin), "the seller's own verified origin");
    refused(await pay(walletId, gated.payTo, page.url), 'another origin');
  });

  it('the field is bounded: an origin in URL.origin form, at most 300 characters, a string', async () => {
    const walletId = await wallet();
    for (const value of [
      `${real.origin}/report`,
      `${real.origin}/`,
      'HTTP://127.0.0.1:1',
      'http://user:pw@127.0.0.1:1',
      'https://seller.example:443',
      'ftp://seller.example',
      'javascript:alert(1)',
      'null',
      '',
      ` ${real.origin}`,
      `https://${'a'.repeat(300)}.example`,
      42,
      null,
      [real.origin],
    ]) {
      const res = await t.request('POST', `/v1/wallets/${walletId}/pay`, {
        token,
        body: { payment_requirements: paymentRequirements({ payTo: real.wall.payTo }), challenge_origin: value },
      });
      assert.equal(
        res.status,
        400,
        `${JSON.stringify(value).slice(0, 60)} → ${res.status} ${JSON.stringify(res.body)}`,
      );
      assert.equal(res.body.error_code, 'invalid_request');
    }
    assert.deepEqual(await authorizations(walletId), []);
    signed(await pay(walletId, real.wall.payTo, real.origin), 'the canonical origin');
  });

  it("another account's wallet: 404, nothing written to its chain", async () => {
    const theirs = await wallet(await mintAgentKey(t, 'someone-else'));
    const res = await pay(theirs, real.wall.payTo, page.url);
    assert.equal(res.status, 404, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'wallet_not_found');
    assert.deepEqual(await t.db.knex('policy_decisions').where({ wallet_id: theirs }).select('id'), []);
    const events = await t.db.knex('audit_events').where({ chain_key: theirs }).pluck('event_type');
    assert.deepEqual(events, ['wallet.created']);
  });
});

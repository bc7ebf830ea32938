/**
 * createX402Buyer pays a challenge only on the origin it came from (src/sdk/challenge-origin.ts), with a scripted
 * Treasury and two scripted sellers over real HTTP: a site that redirects the unpaid request to a real seller,
 * or serves that seller's 402 as its own, is refused with `challenge_origin_mismatch` before Treasury is asked
 * to sign, and no payment header reaches either; a redirect within one origin is paid at the URL that answered
 * 402, and the pay request names that origin (`challenge_origin`). The origin rule itself, case by case
 * (normalisation, relative resources, http named and paid on https).
 */
import assert from 'node:assert/strict';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import { createX402Buyer, TreasuryClient } from '../../../src/sdk/index.js';
import { checkChallengeOrigin } from '../../../src/sdk/challenge-origin.js';
import { ChallengeOriginMismatchError } from '../../../src/sdk/sdk-errors.js';
import { requirements } from '../x402/x402-fixtures.js';
import {
  fakeTreasuryHandler,
  scriptedServer,
  WALLET_ID,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from './scripted-http.js';

const paidHeader = (req: RecordedRequest) => req.headers['payment-signature'] ?? req.headers['x-payment'];

/** A seller that asks for payment for `resourceUrl(req)` and serves `content` once paid. */
function seller(resourceUrl: (req: RecordedRequest) => string, content = 'content') {
  const accepts: PaymentRequirements[] = [requirements()];
  return (req: RecordedRequest): ScriptedReply =>
    paidHeader(req)
      ? { status: 200, body: content }
      : {
          status: 402,
          headers: {
            'payment-required': encodePaymentRequired({ x402Version: 2, resource: { url: resourceUrl(req) }, accepts }),
          },
          body: {},
        };
}

const ownUrl = (req: RecordedRequest) => `http://${String(req.headers.host)}${req.url}`;

describe('buyer SDK: a challenge is paid only on its own origin', () => {
  let treasury: ScriptedServer;
  let shop: ScriptedServer;
  let other: ScriptedServer;
  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    shop = await scriptedServer(() => ({ status: 200 }));
    other = await scriptedServer(seller(ownUrl, 'the real seller'));
  });
  afterEach(async () => {
    await Promise.all([treasury.close(), shop.close(), other.close()]);
  });
  const buyer = () =>
    createX402Buyer({
      client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }),
      walletId: WALLET_ID,
    });
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));
  const paymentsSent = () => [...shop.requests, ...other.requests].filter((r) => paidHeader(r) !== undefined);

  it("a redirect of the unpaid request to another origin's 402 is refused: nothing signed, no payment sent anywhere", async () => {
    shop.handler = (req) =>
      paidHeader(req) ? { status: 200, body: 'stolen' } : { status: 302, headers: { location: `${other.url}/x` } };
    await assert.rejects(
      buyer().request(`${shop.url}/x`),
      (err: unknown) =>
        err instanceof ChallengeOriginMismatchError &&
        err.code === 'challenge_origin_mismatch' &&
        err.where === 'redirect' &&
        err.paidOrigin === shop.url &&
        err.challengeOrigin === other.url,
    );
    assert.equal(pays().length, 0, 'Treasury is not asked to sign');
    assert.deepEqual(paymentsSent(), [], 'no payment header reaches the site or the seller');
  });

  it("another origin's challenge served as the site's own is refused: nothing signed, nothing sent", async () => {
    shop.handler = seller(() => `${other.url}/x`, 'stolen');
    await assert.rejects(
      buyer().request(`${shop.url}/x`),
      (err: unknown) =>
        err instanceof ChallengeOriginMismatchError &&
        err.where === 'resource' &&
        err.paidOrigin === shop.url &&
        err.challengeOrigin === other.url,
    );
    assert.equal(pays().length, 0);
    assert.deepEqual(paymentsSent(), []);
  });

  it('a redirect within the origin is paid at the URL that answered 402', async () => {
    const paid = seller(ownUrl, 'paid content');
    shop.handler = (req) => (req.url === '/old' ? { status: 301, headers: { location: '/new' } } : paid(req));
    const result = await buyer().request(`${shop.url}/old`);
    assert.deepEqual([result.paid, result.body], [true, 'paid content']);
    assert.deepEqual(
      shop.requests.map((r) => [r.url, paidHeader(r) !== undefined]),
      [
        ['/old', false],
        ['/new', false],
        ['/new', true],
      ],
    );
    assert.equal(pays().length, 1);
    // Treasury is told the origin that answered 402 (it binds a Treasury seller's payee to its own origins).
    assert.equal(JSON.parse(pays()[0]!.body).challenge_origin, shop.url);
  });
});

describe('checkChallengeOrigin', () => {
  const named = (url: string) => ({ x402Version: 2 as const, resource: { url }, accepts: [requirements()] });
  const mismatch = (where: 'redirect' | 'resource') => (err: unknown) =>
    err instanceof ChallengeOriginMismatchError && err.where === where;

  it('pays where the 402 answered when the resource names that origin (normalised by URL, or relative)', () => {
    for (const [requested, answered, resource] of [
      ['https://shop.example/a', 'https://shop.example/a', 'https://shop.example/a'],
      ['https://shop.example/a', 'https://SHOP.example:443/b', 'https://shop.example/other'],
      ['http://127.0.0.1:8080/a', 'http://127.0.0.1:8080/a', '/a'],
      ['https://shop.example/a', 'https://shop.example/a', 'http://shop.example/a'],
      ['https://shop.example:8443/a', 'https://shop.example:8443/a', 'http://shop.example:8443/a'],
    ] as const)
      assert.equal(
        checkChallengeOrigin(requested, answered, named(resource)),
        new URL(answered).href,
        `${answered} ${resource}`,
      );
  });

  it('refuses a 402 from another origin, and a resource on another host, port or scheme', () => {
    assert.throws(
      () =>
        checkChallengeOrigin('https://shop.example/a', 'https://seller.example/a', named('https://seller.example/a')),
      mismatch('redirect'),
    );
    assert.throws(
      () => checkChallengeOrigin('http://shop.example/a', 'https://shop.example/a', named('https://shop.example/a')),
      mismatch('redirect'),
    );
    for (const resource of [
      'https://seller.example/a',
      'https://shop.example:8443/a',
      'http://shop.example:443/a',
      'http://shop.example.evil/a',
      'urn:x402:shop.example',
      'http://[::1',
    ])
      assert.throws(
        () => checkChallengeOrigin('https://shop.example/a', 'https://shop.example/a', named(resource)),
        mismatch('resource'),
        resource,
      );
    assert.throws(
      () => checkChallengeOrigin('http://shop.example/a', 'http://shop.example/a', named('https://shop.example/a')),
      mismatch('resource'),
      'a challenge naming https is not paid over plain http',
    );
  });
});

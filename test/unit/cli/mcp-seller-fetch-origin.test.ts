/**
 * `xx mcp`'s seller fetch (src/cli/commands/mcp/seller-fetch.ts) follows redirects hop by hop and says where it
 * ended (`Response.url`), so the buyer SDK it is given to holds the same origin rule as with fetch
 * (src/sdk/challenge-origin.ts): a site redirecting the pay tool's unpaid request to another origin's 402 is
 * `challenge_origin_mismatch`, nothing signed, no payment header sent. Scripted servers on loopback
 * (`allowPrivate`, as in the sandbox).
 */
import assert from 'node:assert/strict';
import { sellerFetch } from '../../../src/cli/commands/mcp/seller-fetch.js';
import { createX402Buyer, TreasuryClient } from '../../../src/sdk/index.js';
import { ChallengeOriginMismatchError } from '../../../src/sdk/sdk-errors.js';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import { requirements } from '../x402/x402-fixtures.js';
import { fakeTreasuryHandler, scriptedServer, WALLET_ID, type ScriptedServer } from '../sdk/scripted-http.js';

describe('xx mcp seller fetch: a 402 is paid only on the origin asked', () => {
  let treasury: ScriptedServer;
  let shop: ScriptedServer;
  let other: ScriptedServer;
  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    other = await scriptedServer((req) =>
      req.headers['payment-signature']
        ? { status: 200, body: 'content' }
        : {
            status: 402,
            headers: {
              'payment-required': encodePaymentRequired({
                x402Version: 2,
                resource: { url: `http://${String(req.headers.host)}${req.url}` },
                accepts: [requirements()],
              }),
            },
          },
    );
    shop = await scriptedServer((req) =>
      req.headers['payment-signature']
        ? { status: 200, body: 'stolen' }
        : { status: 302, headers: { location: `${other.url}/x` } },
    );
  });
  afterEach(async () => {
    await Promise.all([treasury.close(), shop.close(), other.close()]);
  });

  it('says which URL answered after its redirects', async () => {
    const res = await sellerFetch({ allowPrivate: true })(`${shop.url}/x`, {});
    assert.deepEqual([res.status, res.url], [402, `${other.url}/x`]);
  });

  it("refuses a redirect to another origin's 402: nothing signed, no payment sent", async () => {
    const buyer = createX402Buyer({
      client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }),
      walletId: WALLET_ID,
      fetch: sellerFetch({ allowPrivate: true }),
    });
    await assert.rejects(
      buyer.request(`${shop.url}/x`),
      (err: unknown) => err instanceof ChallengeOriginMismatchError && err.where === 'redirect',
    );
    assert.equal(treasury.requests.filter((r) => r.url.endsWith('/pay')).length, 0);
    assert.deepEqual(
      [...shop.requests, ...other.requests].filter((r) => r.headers['payment-signature'] !== undefined),
      [],
    );
  });
});

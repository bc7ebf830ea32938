/**
 * Which token a local key pays in (src/sdk/buyer-assets.ts), with a scripted seller over real HTTP and a real
 * viem account: the seller's 402 names the asset, and an amount in another token than USDC must not be signed
 * as if it were micro-USD.
 * - No `assets`: on a network the SDK knows (Base), an 8-decimal token (cbBTC) is not a candidate —
 *   `NoCompatibleAcceptError`, nothing signed, no payment header; USDC after it is paid. On a network the SDK
 *   knows no USDC for, nothing is a candidate.
 * - `assets`: only the networks it names, in their asset (an EVM address in any case); a malformed map is
 *   `InvalidArgumentError`.
 * - A stored payment of an asset the buyer does not pay in is not sent again on resume.
 */
import assert from 'node:assert/strict';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import {
  createX402Buyer,
  InvalidArgumentError,
  memoryPurchaseStore,
  NoCompatibleAcceptError,
  type LocalBuyerAccount,
} from '../../../src/sdk/index.js';
import { decodePaymentPayload } from '../../../src/x402/header-codec.js';
import { buyer, requirements } from '../x402/x402-fixtures.js';
import { scriptedServer, type RecordedRequest, type ScriptedReply, type ScriptedServer } from './scripted-http.js';

const CBBTC = '0xcbB7C0000aB88B473b1f5aFd9ef808440eed33Bf';
const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const cbBtc = (network = 'eip155:8453') =>
  requirements({ network, asset: CBBTC, amount: '1000000', extra: { name: 'Coinbase Wrapped BTC', version: '2' } });
const baseUsdc = requirements({ network: 'eip155:8453', asset: BASE_USDC, extra: { name: 'USD Coin', version: '2' } });

/** The asset the n-th payment header the seller received pays. */
const paidAsset = (shop: ScriptedServer, n: number) =>
  (decodePaymentPayload(paymentHeaders(shop)[n]!) as { accepted: PaymentRequirements }).accepted.asset;
const paymentHeaders = (shop: ScriptedServer) =>
  shop.requests.map((r) => r.headers['payment-signature']).filter((h): h is string => typeof h === 'string');

describe('buyer SDK: the asset a local key pays in', () => {
  let shop: ScriptedServer;
  let signatures: number;
  let account: LocalBuyerAccount;
  /** The seller: 402 with `accepts` until paid, then `paid`. */
  const sells = (accepts: PaymentRequirements[], paid: ScriptedReply = { status: 200, body: { ok: true } }) => {
    shop.handler = (req: RecordedRequest) =>
      req.headers['payment-signature']
        ? paid
        : {
            status: 402,
            headers: {
              'payment-required': encodePaymentRequired({ x402Version: 2, resource: { url: shop.url }, accepts }),
            },
            body: {},
          };
  };
  beforeEach(async () => {
    shop = await scriptedServer(() => ({ status: 200 }));
    signatures = 0;
    account = {
      address: buyer.address,
      signTypedData: async (td) => {
        signatures++;
        return buyer.signTypedData(td as Parameters<typeof buyer.signTypedData>[0]);
      },
    };
  });
  afterEach(() => shop.close());

  it('without assets, another token than USDC on Base is not a candidate: NoCompatibleAcceptError, nothing signed or sent', async () => {
    sells([cbBtc()]);
    const b = createX402Buyer({ account, networks: ['eip155:8453'], network: 'eip155:8453', maxPriceUsd: '1.00' });
    await assert.rejects(b.request(`${shop.url}/x`), NoCompatibleAcceptError);
    assert.deepEqual([signatures, paymentHeaders(shop)], [0, []]);

    sells([cbBtc(), baseUsdc]);
    const paid = await b.request(`${shop.url}/x`);
    assert.equal(paid.paid, true);
    assert.equal(paidAsset(shop, 0), BASE_USDC, 'the USDC entry');
  });

  it('without assets, a network the SDK knows no USDC for pays nothing, whatever its asset', async () => {
    sells([cbBtc('eip155:31337'), requirements({ network: 'eip155:31337' })]);
    const b = createX402Buyer({ account, maxPriceUsd: '1.00' });
    await assert.rejects(b.request(`${shop.url}/x`), NoCompatibleAcceptError);
    assert.deepEqual([signatures, paymentHeaders(shop)], [0, []]);
  });

  it('assets: only the networks it names, in their asset (EVM addresses in any case); a malformed map is refused', async () => {
    const usdc = requirements();
    sells([cbBtc('eip155:84532'), usdc]);
    const b = createX402Buyer({ account, assets: { 'eip155:84532': usdc.asset.toLowerCase() }, maxPriceUsd: '1.00' });
    assert.equal((await b.request(`${shop.url}/x`)).paid, true);
    assert.equal(paidAsset(shop, 0), usdc.asset);

    // A network it does not name pays nothing, even one the SDK does not know.
    sells([cbBtc('eip155:31337')]);
    const before = paymentHeaders(shop).length;
    await assert.rejects(b.request(`${shop.url}/x`), NoCompatibleAcceptError);
    assert.equal(paymentHeaders(shop).length, before);

    const malformed: Array<Record<string, string>> = [
      {},
      { 'eip155:8453': 'So11111111111111111111111111111111111111112' },
      { base: BASE_USDC },
    ];
    for (const assets of malformed)
      assert.throws(
        () => createX402Buyer({ account, assets }),
        (err: unknown) => err instanceof InvalidArgumentError && err.field.startsWith('options.assets'),
        JSON.stringify(assets),
      );
  });

  it('a stored payment of an asset the buyer does not pay in is not sent again on resume', async () => {
    const purchases = memoryPurchaseStore();
    const other = cbBtc('eip155:31337'); // a network the SDK does not know, in a token named for it
    sells([other], { status: 0, drop: true });
    const careless = createX402Buyer({ account, purchases, assets: { 'eip155:31337': CBBTC } });
    await assert.rejects(careless.request(`${shop.url}/x`, { purchaseKey: 'report-1' }));
    assert.equal(paymentHeaders(shop).length, 1, 'signed and sent once, the answer lost');

    sells([other]);
    const careful = createX402Buyer({ account, purchases, assets: { 'eip155:31337': BASE_USDC } });
    await assert.rejects(careful.request(`${shop.url}/x`, { purchaseKey: 'report-1' }), NoCompatibleAcceptError);
    assert.deepEqual([paymentHeaders(shop).length, signatures], [1, 1], 'the stored payment is not sent again');
  });
});

/**
 * A seller cannot fill the buyer's purchase store (src/sdk/x402-purchase.ts): a purchase refused before anything
 * was signed — over the budget, no payable entry, Treasury's policy refusal — is forgotten at once, so a file
 * store holding one purchase still pays the next; a purchase whose payment was signed, sent and refused stays,
 * and lives until its signed authorization can no longer settle (`validBefore`, a Solana blockhash's life),
 * never as long as the seller's `maxTimeoutSeconds` says when that is longer.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodePaymentRequired } from '../../../src/x402/header-codec.js';
import type { PaymentRequirements } from '../../../src/x402/wire-schemas.js';
import {
  createX402Buyer,
  filePurchaseStore,
  InsufficientBudgetError,
  NoCompatibleAcceptError,
  TreasuryApiError,
  TreasuryClient,
  X402PaymentFailedError,
  type PurchaseStore,
} from '../../../src/sdk/index.js';
import { SOLANA_PAYLOAD_LIFETIME_MS, signedExpiry } from '../../../src/sdk/x402-purchase.js';
import type { SignedTerms } from '../../../src/sdk/signed-terms.js';
import { requirements } from '../x402/x402-fixtures.js';
import {
  fakeTreasuryHandler,
  scriptedServer,
  signedFor,
  WALLET_ID,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedServer,
} from './scripted-http.js';

/** A seller asking `accepts` for its own URL; a payment gets `paid`. */
function seller(accepts: PaymentRequirements[], paid: ScriptedReply = { status: 200, body: 'content' }) {
  return (req: RecordedRequest): ScriptedReply =>
    req.headers['payment-signature']
      ? paid
      : {
          status: 402,
          headers: {
            'payment-required': encodePaymentRequired({
              x402Version: 2,
              resource: { url: `http://${String(req.headers.host)}${req.url}` },
              accepts,
            }),
          },
          body: {},
        };
}

describe('buyer SDK: refused purchases do not fill the purchase store', () => {
  let treasury: ScriptedServer;
  let shop: ScriptedServer;
  let dir: string;
  let store: PurchaseStore;
  beforeEach(async () => {
    treasury = await scriptedServer(fakeTreasuryHandler());
    shop = await scriptedServer(() => ({ status: 200 }));
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'xx-purchases-'));
    store = filePurchaseStore({ dir, maxPurchases: 1 });
  });
  afterEach(async () => {
    await Promise.all([treasury.close(), shop.close()]);
    await fs.rm(dir, { recursive: true, force: true });
  });
  const buyer = () =>
    createX402Buyer({
      client: new TreasuryClient({ apiUrl: treasury.url, token: 'xx_pat_test' }),
      walletId: WALLET_ID,
      maxPriceUsd: '0.01',
      purchases: store,
    });
  const pays = () => treasury.requests.filter((r) => r.url.endsWith('/pay'));

  it('a purchase over the budget, with no payable entry or refused by Treasury is forgotten; the next one pays', async () => {
    shop.handler = seller([requirements({ amount: '10001' })]);
    await assert.rejects(buyer().request(`${shop.url}/dear`, { purchaseKey: 'a' }), InsufficientBudgetError);
    shop.handler = seller([requirements({ network: 'eip155:1' })]);
    await assert.rejects(buyer().request(`${shop.url}/elsewhere`, { purchaseKey: 'b' }), NoCompatibleAcceptError);
    shop.handler = seller([requirements()]);
    treasury.handler = fakeTreasuryHandler((req) =>
      req.url.endsWith('/pay')
        ? { status: 403, body: { error_code: 'policy_denied', reason: 'policy_denied', user_message: 'no' } }
        : undefined,
    );
    await assert.rejects(
      buyer().request(`${shop.url}/denied`, { purchaseKey: 'c' }),
      (err: unknown) => err instanceof TreasuryApiError && err.status === 403,
    );
    assert.deepEqual(await fs.readdir(dir).catch(() => []), [], 'no refused purchase is kept');

    treasury.handler = fakeTreasuryHandler();
    const result = await buyer().request(`${shop.url}/fair`, { purchaseKey: 'd' });
    assert.equal(result.paid, true);
    assert.equal(pays().length, 2, 'the policy refusal, then the fair purchase');
  });

  it('a payment signed, sent and refused keeps its purchase until its authorization expires', async () => {
    const r = requirements({ maxTimeoutSeconds: 2_592_000 });
    shop.handler = seller([r], { status: 402, body: { error: 'settlement_failed' } });
    await assert.rejects(buyer().request(`${shop.url}/x`, { purchaseKey: 'a' }), X402PaymentFailedError);
    const kept = await store.get('a');
    assert.ok(kept?.signed, 'the signed payment is kept: a retry sends it again');
    assert.equal(kept.expiresAt, Number(signedFor(r).authorization.validBefore) * 1000);
  });
});

describe('signedExpiry: a signed payment is kept as long as it can settle, no longer', () => {
  const now = 1_800_000_000_000;
  const thirtyDays = 2_592_000;

  it("an EVM authorization until its validBefore (or Permit2 deadline), even when the seller's time-out is longer", () => {
    const validBefore = now / 1000 + 120;
    const exact = {
      scheme: 'exact',
      signature: '0x',
      network: 'eip155:84532',
      asset: '0x',
      authorization: { ...signedFor(requirements()).authorization, validBefore: String(validBefore) },
    } as SignedTerms;
    assert.equal(signedExpiry(exact, thirtyDays, now), validBefore * 1000);
    const upto = {
      scheme: 'upto',
      signature: '0x',
      network: 'eip155:84532',
      asset: '0x',
      permit2_authorization: { deadline: String(validBefore) },
    } as unknown as SignedTerms;
    assert.equal(signedExpiry(upto, thirtyDays, now), validBefore * 1000);
    const unreadable = { ...exact, authorization: { ...signedFor(requirements()).authorization, validBefore: 'x' } };
    assert.equal(signedExpiry(unreadable as SignedTerms, 60, now), now + 60_000, 'unreadable: the time-out');
  });

  it("a Solana transaction for a blockhash's life, whatever the seller's time-out", () => {
    const svm: SignedTerms = { scheme: 'exact', network: 'solana:x', asset: 'm', transaction: 'AA==' };
    assert.equal(signedExpiry(svm, thirtyDays, now), now + SOLANA_PAYLOAD_LIFETIME_MS);
    assert.equal(signedExpiry(svm, 10, now), now + SOLANA_PAYLOAD_LIFETIME_MS);
  });
});

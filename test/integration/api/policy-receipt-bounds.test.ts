/**
 * What policy receipts (GET /v1/wallets/{id}/policy/receipt) may take, through HTTP, the real signer (SoftHSM, its
 * own policy store) and PostgreSQL:
 * - in the signer, receipts count in the wallet's receipt ceilings only (signer/owner-policy/policy-receipts.ts): a
 *   reader asking for more receipts than the wallet's signature ceiling allows leaves its payments untouched (200),
 *   and receipts past the receipt ceiling answer 429 `signer_limit_exceeded` naming `wallet_receipts_minute`;
 * - in the API, receipts count per account in the `receipt` rate-limit bucket, whichever wallet and bearer of the
 *   account asks (src/api/wallets/wallet-routes.ts): past it 429 `rate_limited` (bucket `receipt`), while another
 *   account's receipts still pass.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { paymentRequirements } from '../../builders/payment-requirements.js';
import { useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

const nonce = () => randomBytes(32).toString('hex');

/** A fresh account: its session, default agent and a Treasury PAT. */
async function newAccount(t: TestTreasury) {
  const me = await signInWithNewKey(t);
  const minted = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'treasury' } });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  return { ...me, pat: minted.body.pat as string };
}

async function newWallet(t: TestTreasury, token: string): Promise<{ id: string; address: string }> {
  const res = await t.request('POST', '/v1/wallets', { token, body: { policy: { per_tx_cap_usd: '1' } } });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

const receipt = (t: TestTreasury, walletId: string, token: string) =>
  t.request('GET', `/v1/wallets/${walletId}/policy/receipt?nonce=${nonce()}`, { token });

describe('policy receipt bounds (HTTP, SoftHSM signer, PostgreSQL)', function () {
  this.timeout(180_000);

  describe("the signer's receipt ceilings", () => {
    const SIGNATURES_PER_MINUTE = 5;
    const RECEIPTS_PER_MINUTE = 8;
    const t = useTestTreasury({
      signerEnv: {
        TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: String(SIGNATURES_PER_MINUTE),
        TREASURY_SIGNER_WALLET_RECEIPTS_PER_MINUTE: String(RECEIPTS_PER_MINUTE),
      },
    });

    it("receipts past the wallet's signature ceiling leave its payments untouched; past their own, 429", async () => {
      const me = await newAccount(t);
      const wallet = await newWallet(t, me.pat);
      for (let i = 0; i <= SIGNATURES_PER_MINUTE; i++) {
        const res = await receipt(t, wallet.id, me.pat);
        assert.equal(res.status, 200, `receipt ${i + 1}: ${JSON.stringify(res.body)}`);
      }
      const paid = await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: me.pat,
        body: { payment_requirements: paymentRequirements() },
      });
      assert.equal(
        paid.status,
        200,
        `a payment after ${SIGNATURES_PER_MINUTE + 1} receipts: ${JSON.stringify(paid.body)}`,
      );

      for (let i = SIGNATURES_PER_MINUTE + 1; i < RECEIPTS_PER_MINUTE; i++)
        assert.equal((await receipt(t, wallet.id, me.pat)).status, 200, `receipt ${i + 1}`);
      const refused = await receipt(t, wallet.id, me.pat);
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.deepEqual(
        [refused.body.error_code, refused.body.limit, refused.body.max],
        ['signer_limit_exceeded', 'wallet_receipts_minute', String(RECEIPTS_PER_MINUTE)],
      );
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

      const again = await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
        token: me.pat,
        body: { payment_requirements: paymentRequirements() },
      });
      assert.equal(again.status, 200, `a payment once the receipts are refused: ${JSON.stringify(again.body)}`);
    });
  });

  describe("the API's receipt bucket, per account", () => {
    const RECEIPTS_PER_WINDOW = 3;
    const t = useTestTreasury({
      extraEnv: {
        TREASURY_RATE_LIMIT_RECEIPT: String(RECEIPTS_PER_WINDOW),
        TREASURY_RATE_LIMIT_WINDOW_SECONDS: '3600',
      },
    });

    it("one account's receipts over all its wallets and bearers pass the bucket, then 429; another account's pass", async () => {
      const me = await newAccount(t);
      const wallets = [await newWallet(t, me.pat), await newWallet(t, me.pat)];
      const agentPat = await t.request('POST', '/v1/pats', {
        token: me.session,
        body: { scope_type: 'agent', scope_id: me.agent_id },
      });
      assert.equal(agentPat.status, 201, JSON.stringify(agentPat.body));
      for (let i = 0; i < RECEIPTS_PER_WINDOW; i++) {
        const res = await receipt(t, wallets[i % 2]!.id, me.pat);
        assert.equal(res.status, 200, `receipt ${i + 1}: ${JSON.stringify(res.body)}`);
      }
      const refused = await receipt(t, wallets[1]!.id, me.pat);
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.deepEqual([refused.body.error_code, refused.body.bucket], ['rate_limited', 'receipt']);
      assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

      // Another bearer of the same account is the same tenant: refused too, on a wallet its agent holds.
      const agentWallet = await t.request('POST', `/v1/agents/${me.agent_id}/wallets`, {
        token: agentPat.body.pat,
        body: {},
      });
      assert.equal(agentWallet.status, 201, JSON.stringify(agentWallet.body));
      const byAgent = await receipt(t, agentWallet.body.id, agentPat.body.pat);
      assert.deepEqual([byAgent.status, byAgent.body.bucket], [429, 'receipt']);

      const other = await newAccount(t);
      const theirs = await newWallet(t, other.pat);
      const passed = await receipt(t, theirs.id, other.pat);
      assert.equal(passed.status, 200, `another account's receipt: ${JSON.stringify(passed.body)}`);
    });
  });
});

/**
 * The `account` rate-limit bucket (src/api/http/middleware/rate-limit.ts), through HTTP and PostgreSQL: every
 * authenticated call but the pay routes counts per bearer (`token`) and per tenant (`account`: the bearer's platform
 * account, else its scope), so a tenant that mints more PATs does not multiply its share of the API — before, each
 * of its up to 1,000 PATs had a `token` budget of its own. Another tenant's calls still pass.
 */
import assert from 'node:assert/strict';
import { useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

async function patsOfNewAccount(
  t: TestTreasury,
  n: number,
): Promise<{ session: string; pats: string[]; ids: string[] }> {
  const me = await signInWithNewKey(t);
  const pats: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const minted = await t.request('POST', '/v1/pats', { token: me.session, body: { scope_type: 'treasury' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    pats.push(minted.body.pat as string);
    ids.push(minted.body.id as string);
  }
  return { session: me.session, pats, ids };
}

describe("the account bucket: one tenant's bearers share one budget (HTTP, PostgreSQL)", function () {
  this.timeout(120_000);
  const PER_TOKEN = 5;
  const PER_ACCOUNT = 8;
  const t = useTestTreasury({
    extraEnv: {
      TREASURY_RATE_LIMIT_TOKEN: String(PER_TOKEN),
      TREASURY_RATE_LIMIT_ACCOUNT: String(PER_ACCOUNT),
      TREASURY_RATE_LIMIT_WINDOW_SECONDS: '3600',
    },
  });

  it("calls over three PATs of one account stop at the account's budget; another account's pass", async () => {
    const { session, pats, ids } = await patsOfNewAccount(t, 3);
    const answers: string[] = [];
    for (let round = 0; round < 3; round++)
      for (const pat of pats) {
        const res = await t.request('GET', '/v1/wallets', { token: pat });
        answers.push(res.status === 429 ? `429 ${res.body.bucket}` : String(res.status));
      }
    // The session that minted them is the owner's own: not counted in `account`.
    assert.deepEqual(answers, [...Array(PER_ACCOUNT).fill('200'), '429 account']);
    const refused = await t.request('GET', '/v1/wallets', { token: pats[1]! });
    assert.deepEqual(
      [refused.body.error_code, refused.body.bucket, refused.body.limit],
      ['rate_limited', 'account', PER_ACCOUNT],
    );
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

    // The owner's signed-in session still revokes a PAT that spent the account's budget.
    const revoked = await t.request('DELETE', `/v1/pats/${ids[0]!}`, { token: session });
    assert.ok(revoked.status === 200 || revoked.status === 204, JSON.stringify(revoked.body));

    const other = await patsOfNewAccount(t, 1);
    const theirs = await t.request('GET', '/v1/wallets', { token: other.pats[0]! });
    assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
  });
});

describe("the pay_account bucket: one tenant's bearers share the pay routes outside the admission (HTTP, PostgreSQL)", function () {
  this.timeout(120_000);
  const PER_TENANT = 8;
  const t = useTestTreasury({
    extraEnv: {
      TREASURY_RATE_LIMIT_PAY_ACCOUNT: String(PER_TENANT),
      TREASURY_RATE_LIMIT_WINDOW_SECONDS: '3600',
    },
  });
  const TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

  it("policy reads and evaluations over three PATs of one account stop at the tenant's budget; another account's pass", async () => {
    const { pats } = await patsOfNewAccount(t, 3);
    const wallet = await t.request('POST', '/v1/wallets', { token: pats[0]!, body: {} });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const walletId = wallet.body.id as string;
    const answers: string[] = [];
    for (let round = 0; round < 2; round++)
      for (const pat of pats) {
        const read = await t.request('GET', `/v1/wallets/${walletId}/policy`, { token: pat });
        const evaluated = await t.request('POST', `/v1/wallets/${walletId}/policy/evaluate`, {
          token: pat,
          body: { to: TO, amount_usd: '1' },
        });
        for (const res of [read, evaluated])
          answers.push(res.status === 429 ? `429 ${res.body.bucket}` : String(res.status));
      }
    // Each PAT's own `pay` budget is far from spent: the tenant's is what refuses.
    assert.deepEqual(answers, [...Array(PER_TENANT).fill('200'), ...Array(12 - PER_TENANT).fill('429 pay_account')]);
    const refused = await t.request('POST', `/v1/wallets/${walletId}/authorizations/auth_unknown/settlement`, {
      token: pats[2]!,
      body: { transaction: `0x${'ab'.repeat(32)}` },
    });
    assert.deepEqual(
      [refused.status, refused.body.error_code, refused.body.bucket, refused.body.limit],
      [429, 'rate_limited', 'pay_account', PER_TENANT],
    );
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);

    const other = await patsOfNewAccount(t, 1);
    const theirWallet = await t.request('POST', '/v1/wallets', { token: other.pats[0]!, body: {} });
    assert.equal(theirWallet.status, 201, JSON.stringify(theirWallet.body));
    const theirs = await t.request('GET', `/v1/wallets/${theirWallet.body.id as string}/policy`, {
      token: other.pats[0]!,
    });
    assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
  });
});

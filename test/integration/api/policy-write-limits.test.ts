/**
 * Wallet policy writes through HTTP (real PostgreSQL, real SoftHSM signer), with the production rate limits:
 * each write appends an audit row nobody may delete, so the writes are counted per account in their own
 * `policy` bucket (src/api/http/middleware/rate-limit.ts), not per token in the `pay` bucket. An account's
 * 61st write within the window — whichever of its Treasury PATs, or its agents' Treasury accounts, it comes
 * through, signed or not — answers 429 `rate_limited` (bucket `policy`) and writes nothing; another account
 * writes on. The same policy written again appends no row and leaves the wallet untouched; a change appends
 * the new policy and the previous one's hash (the chain holds the previous policy whole in an earlier row).
 */
import assert from 'node:assert/strict';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { storedPolicyHash } from '../../../src/api/wallets/policy-audit.js';

/** The production default of TREASURY_RATE_LIMIT_POLICY. */
const POLICY_WRITES = 60;

describe('wallet policy writes: rate limit per account and audit rows (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({ productionRateLimits: true });

  /** A Treasury PAT of `session`'s account (of `treasuryAccountId`, else its first agent's). */
  async function treasuryPat(session: string, treasuryAccountId?: string): Promise<string> {
    const res = await t.request('POST', '/v1/pats', {
      token: session,
      body: { scope_type: 'treasury', ...(treasuryAccountId ? { scope_id: treasuryAccountId } : {}) },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.pat as string;
  }

  async function newWallet(token: string): Promise<{ id: string; updated_at: string }> {
    const res = await t.request('POST', '/v1/wallets', {
      token,
      body: { label: 'w', policy: { per_tx_cap_usd: '1' } },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  }

  const putPolicy = (token: string, walletId: string, policy: Record<string, unknown>) =>
    t.request('PUT', `/v1/wallets/${walletId}/policy`, { token, body: policy });

  const policyRows = (walletId: string) =>
    t.db.knex('audit_events').where({ chain_key: walletId }).whereLike('event_type', 'policy.%').orderBy('seq');

  it("an account's policy writes past the limit answer 429 (bucket policy) whichever of its PATs or agents they come through; another account writes on", async () => {
    const me = await signInWithNewKey(t);
    const [one, two] = [await treasuryPat(me.session), await treasuryPat(me.session)];
    const wallet = await newWallet(one);
    // Alternating policies: every write changes the policy, so each one appends a row.
    const answers = [];
    for (let i = 0; i < POLICY_WRITES + 1; i++)
      answers.push(await putPolicy(i % 2 ? two : one, wallet.id, { per_tx_cap_usd: i % 2 ? '2' : '3' }));
    assert.deepEqual(
      answers.slice(0, POLICY_WRITES).filter((a) => a.status !== 200),
      [],
      'the first 60 are written',
    );
    const refused = answers[POLICY_WRITES]!;
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'rate_limited');
    assert.equal(refused.body.bucket, 'policy');
    assert.equal(refused.body.limit, POLICY_WRITES);
    assert.match(refused.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    assert.equal((await policyRows(wallet.id)).length, POLICY_WRITES, 'the refused write appended nothing');

    // Another agent of the same account (a Treasury account of its own) shares the count; so does a signed write.
    const agent = await t.request('POST', '/v1/agents', { token: me.session, body: { label: 'second' } });
    assert.equal(agent.status, 201, JSON.stringify(agent.body));
    const sibling = await treasuryPat(me.session, agent.body.treasury_account_id);
    const siblingWallet = await newWallet(sibling);
    const viaSibling = await putPolicy(sibling, siblingWallet.id, { per_tx_cap_usd: '4' });
    assert.equal(viaSibling.status, 429, JSON.stringify(viaSibling.body));
    assert.equal(viaSibling.body.bucket, 'policy');
    const signed = await t.request('PUT', `/v1/wallets/${wallet.id}/policy/signed`, { token: two, body: {} });
    assert.equal(signed.status, 429, JSON.stringify(signed.body));
    assert.equal(signed.body.bucket, 'policy');
    // Reads and payments are not policy writes.
    assert.equal((await t.request('GET', `/v1/wallets/${wallet.id}/policy`, { token: one })).status, 200);

    const other = await signInWithNewKey(t);
    const theirs = await treasuryPat(other.session);
    const otherWallet = await newWallet(theirs);
    assert.equal((await putPolicy(theirs, otherWallet.id, { per_tx_cap_usd: '5' })).status, 200, 'another account');

    const metrics = (await t.request('GET', '/metrics')).body as string;
    assert.match(metrics, /treasury_rate_limited_total\{bucket="policy"\} 3\b/);
  });

  it('the same policy again appends no row and leaves the wallet as it was; a change appends the previous policy by its hash', async () => {
    const me = await signInWithNewKey(t);
    const token = await treasuryPat(me.session);
    const wallet = await newWallet(token);
    const policy = { per_tx_cap_usd: '2', daily_cap_usd: '10' };
    assert.equal((await putPolicy(token, wallet.id, policy)).status, 200);
    const [written] = await policyRows(wallet.id);
    const before = (await t.request('GET', `/v1/wallets/${wallet.id}`, { token })).body;

    // The same policy, its keys in another order and its amounts spelled otherwise (normalised alike).
    const again = await putPolicy(token, wallet.id, { daily_cap_usd: '10.00', per_tx_cap_usd: '2.0' });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body.policy, before.policy);
    assert.equal((await policyRows(wallet.id)).length, 1, 'no second row');
    const after = (await t.request('GET', `/v1/wallets/${wallet.id}`, { token })).body;
    assert.equal(after.updated_at, before.updated_at, 'the wallet untouched');

    assert.equal((await putPolicy(token, wallet.id, { per_tx_cap_usd: '3' })).status, 200);
    const rows = await policyRows(wallet.id);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[1].payload, {
      previous_policy_hash: storedPolicyHash(written.payload.policy),
      policy: { per_tx_cap_usd: '3' },
    });
    assert.equal(rows[0].payload.previous, undefined, 'no copy of the previous policy');
  });
});

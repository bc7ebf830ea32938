/**
 * Tenant isolation bounds through HTTP (real PostgreSQL, real SoftHSM signer): an agent PAT creates wallets up
 * to the per-agent bound and an account's agents up to the per-account bound, then 409 `wallet_limit_reached`
 * naming the bound (concurrent creations do not overshoot); an agent PAT's new wallet gets a policy no looser
 * than the PAT's daily cap, which the pay path enforces; junk bearers from one address are throttled while a
 * valid bearer from the same address still passes, and one refused bearer is throttled from any address; a
 * JSON body nesting too deep or holding too many keys answers 400 `body_too_complex` before it is parsed.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

describe('tenant isolation bounds (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  const t = useTestTreasury({
    extraEnv: {
      TREASURY_MAX_WALLETS_PER_AGENT: '3',
      TREASURY_MAX_WALLETS_PER_ACCOUNT: '5',
      TREASURY_RATE_LIMIT_AUTH_FAILURES: '5',
      TREASURY_RATE_LIMIT_AUTH_FAILURES_PER_TOKEN: '3',
      TREASURY_TRUSTED_PROXIES: '127.0.0.1/32, ::1',
    },
  });

  /** A fresh account, its default agent and an agent PAT with `fields` (e.g. a daily cap). */
  async function agentPat(fields: { daily_cap_usd?: string } = {}) {
    const me = await signInWithNewKey(t);
    const pat = await t.request('POST', '/v1/pats', {
      token: me.session,
      body: { scope_type: 'agent', scope_id: me.agent_id, ...fields },
    });
    assert.equal(pat.status, 201, JSON.stringify(pat.body));
    return { ...me, pat: pat.body.pat as string, patId: pat.body.id as string };
  }
  const addWallet = (token: string, agentId: string) =>
    t.request('POST', `/v1/agents/${agentId}/wallets`, { token, body: {} });

  describe('wallets', () => {
    it('an agent PAT creates wallets up to the per-agent bound, then 409 wallet_limit_reached with the limit', async () => {
      const me = await agentPat();
      for (let i = 0; i < 3; i++) assert.equal((await addWallet(me.pat, me.agent_id)).status, 201);
      const refused = await addWallet(me.pat, me.agent_id);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.equal(refused.body.error_code, 'wallet_limit_reached');
      assert.deepEqual(
        { scope: refused.body.scope, limit: refused.body.limit, active: refused.body.active_wallets },
        { scope: 'agent', limit: 3, active: 3 },
      );
      const rows = await t.db
        .knex('wallets as w')
        .join('agents as a', 'a.treasury_account_id', 'w.account_id')
        .where('a.id', me.agent_id)
        .select('w.id');
      assert.equal(rows.length, 3, 'no fourth wallet');
    });

    it('concurrent creations do not pass the bound', async () => {
      const me = await agentPat();
      const answers = await Promise.all(Array.from({ length: 6 }, () => addWallet(me.pat, me.agent_id)));
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 201, 409, 409, 409]);
    });

    it("the account's agents share the per-account bound", async () => {
      const me = await agentPat();
      const second = await t.request('POST', '/v1/agents', { token: me.session, body: { label: 'second' } });
      assert.equal(second.status, 201);
      for (let i = 0; i < 3; i++) assert.equal((await addWallet(me.pat, me.agent_id)).status, 201);
      for (let i = 0; i < 2; i++) assert.equal((await addWallet(me.session, second.body.agent_id)).status, 201);
      const refused = await addWallet(me.session, second.body.agent_id);
      assert.equal(refused.status, 409, JSON.stringify(refused.body));
      assert.deepEqual(
        { code: refused.body.error_code, scope: refused.body.scope, limit: refused.body.limit },
        { code: 'wallet_limit_reached', scope: 'account', limit: 5 },
      );
    });

    it("an agent PAT's new wallet gets a policy within the PAT's daily cap, and the pay path holds to it", async () => {
      const capped = await agentPat({ daily_cap_usd: '5' });
      const wallet = await addWallet(capped.pat, capped.agent_id);
      assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
      assert.deepEqual(wallet.body.policy, { per_tx_cap_usd: '1', daily_cap_usd: '5' });
      const pay = (amount: string) =>
        t.request('POST', `/v1/wallets/${wallet.body.id}/pay`, {
          token: capped.pat,
          body: { payment_requirements: paymentRequirements({ amount }) },
        });
      assert.equal((await pay('1000001')).status, 403, 'above the default per-payment cap');
      assert.equal((await pay('1000000')).status, 200);

      const small = await agentPat({ daily_cap_usd: '0.25' });
      const tight = await addWallet(small.pat, small.agent_id);
      assert.deepEqual(tight.body.policy, { per_tx_cap_usd: '0.25', daily_cap_usd: '0.25' });

      const uncapped = await agentPat();
      const fallback = await addWallet(uncapped.pat, uncapped.agent_id);
      assert.deepEqual(fallback.body.policy, { per_tx_cap_usd: '1', daily_cap_usd: '10' }, 'the configured default');

      const owners = await t.request('POST', `/v1/agents/${uncapped.agent_id}/wallets`, {
        token: uncapped.session,
        body: { policy: { per_tx_cap_usd: '20' } },
      });
      assert.deepEqual(owners.body.policy, { per_tx_cap_usd: '20' }, "the owner's own policy stands");
    });
  });

  describe('refused bearers', () => {
    const fresh = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;
    const from = (client: string) => ({ headers: { 'x-forwarded-for': client } });
    const junk = () => `xx_pat_${randomBytes(32).toString('base64url')}`;

    it('junk bearers from one address are throttled while a valid bearer from that address still passes', async () => {
      const nat = fresh();
      const me = await agentPat();
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++)
        statuses.push((await t.request('GET', '/v1/auth/whoami', { token: junk(), ...from(nat) })).status);
      assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
      const throttled = await t.request('GET', '/v1/auth/whoami', { token: junk(), ...from(nat) });
      assert.equal(throttled.body.error_code, 'rate_limited');
      assert.equal(throttled.body.bucket, 'auth_failure');
      assert.match(throttled.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
      for (const token of [me.pat, me.session]) {
        const ok = await t.request('GET', '/v1/auth/whoami', { token, ...from(nat) });
        assert.equal(ok.status, 200, `a valid bearer behind the same address passes: ${JSON.stringify(ok.body)}`);
      }
    });

    it('one refused bearer is throttled from any address, before any lookup; other bearers are not', async () => {
      const me = await agentPat();
      const revoked = await agentPat();
      assert.equal((await t.request('DELETE', `/v1/pats/${revoked.patId}`, { token: revoked.session })).status, 200);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await t.request('GET', '/v1/auth/whoami', { token: revoked.pat, ...from(fresh()) })).status);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      const spent = await t.request('GET', '/v1/auth/whoami', { token: revoked.pat, ...from(fresh()) });
      assert.equal(spent.body.bucket, 'auth_failure_token');
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token: me.pat, ...from(fresh()) })).status, 200);
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token: junk(), ...from(fresh()) })).status, 401);
    });
  });

  describe('JSON bodies', () => {
    let walletPath: string;
    let pat: string;
    before(async () => {
      const me = await agentPat();
      pat = me.pat;
      walletPath = `/v1/wallets/${(await addWallet(me.pat, me.agent_id)).body.id}/pay`;
    });

    it('a 1 MB pay body of 90,000 unknown keys answers 400 body_too_complex before it is parsed', async () => {
      const filler = Array.from({ length: 90_000 }, (_, i) => `"k${i}":1`).join(',');
      const rawBody = `{"payment_requirements":${JSON.stringify(paymentRequirements()).slice(0, -1)},${filler}}}`;
      assert.ok(rawBody.length < 1024 * 1024, `${rawBody.length} bytes, under the body limit`);
      const res = await t.request('POST', walletPath, { token: pat, rawBody, headers: { 'idempotency-key': 'k1' } });
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
      assert.deepEqual(
        { code: res.body.error_code, limit: res.body.limit, max: res.body.max },
        { code: 'body_too_complex', limit: 'keys', max: 5000 },
      );
    });

    it('100,000-deep nesting answers 400 body_too_complex, not 500', async () => {
      const deep = (open: string, close: string) => `${open.repeat(100_000)}1${close.repeat(100_000)}`;
      // The entry's open `extra` once carried any depth as far as the Idempotency-Key's canonical JSON (a 500).
      const entry = JSON.stringify({ ...paymentRequirements(), extra: undefined }).slice(0, -1);
      for (const rawBody of [
        `{"payment_requirements":${entry},"extra":{"name":"USDC","version":"2","x":${deep('{"a":', '}')}}}}`,
        `{"payment_requirements":${entry},"outputSchema":${deep('[', ']')}}}`,
        deep('[', ']'),
      ]) {
        const res = await t.request('POST', walletPath, {
          token: pat,
          rawBody,
          headers: { 'idempotency-key': 'deep' },
        });
        assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
        assert.deepEqual(
          { code: res.body.error_code, limit: res.body.limit, max: res.body.max },
          { code: 'body_too_complex', limit: 'depth', max: 32 },
        );
      }
    });

    it('the requirements and their extra stay open to fields the API does not use, at most 32 keys each', async () => {
      const extraFields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x${i}`, i]));
      const pay = (overrides: Record<string, unknown>) =>
        t.request('POST', walletPath, { token: pat, body: { payment_requirements: paymentRequirements(overrides) } });
      const open = await pay({
        outputSchema: { input: { type: 'http' } },
        extra: { name: 'USDC', version: '2', x: 1 },
      });
      assert.equal(open.status, 200, JSON.stringify(open.body));
      const wideExtra = await pay({ extra: { name: 'USDC', version: '2', ...extraFields(31) } });
      assert.equal(wideExtra.status, 400, JSON.stringify(wideExtra.body));
      assert.equal(wideExtra.body.error_code, 'invalid_request');
      const wide = await pay(extraFields(26));
      assert.equal(wide.status, 400, JSON.stringify(wide.body));
    });
  });
});

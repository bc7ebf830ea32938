/**
 * A buyer PAT's daily cap changed through one API process binds the payments another process decides from
 * the statement after the change committed — although the other process still holds the PAT's bearer, with
 * its old cap, in its lookup cache (TREASURY_AUTH_CACHE_MS, here its 10 s maximum, so that the cache cannot
 * expire during a test). Each way a capped PAT's payment is decided is raced: on the day's total the process
 * remembers (the group commit), under the PAT's lock (a process that has not read the day yet), a cap set on
 * a PAT that had none, and a session exchanged from the PAT (it spends as its PAT). Every payment past the
 * new cap answers the cap refusal (429 MGMT_6014, the cap named being the new one), never a 500; the day's
 * stored total never passes the new cap.
 */
import assert from 'node:assert/strict';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { signInBody } from '../../support/sign-in.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { paymentRequirements } from '../../builders/payment-requirements.js';

type Answer = { status: number; body: any };

describe('buyer PAT cap changed through another API process (two processes, one PostgreSQL)', function () {
  this.timeout(240_000);
  let signer: TestSigner;
  let db: TestDatabase;
  /** `a` takes the cap changes, `b` the payments. */
  let a: ApiProcess;
  let b: ApiProcess;

  /** A JSON call to `api`, with the bearer `token` unless it is undefined. */
  const call = async (api: ApiProcess, method: string, route: string, token: string | undefined, body?: unknown) => {
    const res = await fetch(api.url + route, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        'content-type': 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any } as Answer;
  };

  before(async () => {
    signer = await startTestSigner();
    db = await createTestDatabase();
    const env = { TREASURY_AUTH_CACHE_MS: '10000' };
    [a, b] = await Promise.all([startApiProcess(db, signer, env), startApiProcess(db, signer, env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
    await signer?.stop();
  });

  /**
   * A new owner signed in through `a`, its buyer PAT (with `dailyCapUsd`, or none) and two wallets; `setCap`
   * changes the PAT's cap through `a` (which forgets it from its own bearer cache only).
   */
  async function buyer(dailyCapUsd: string | null) {
    const signedIn = await call(
      a,
      'POST',
      '/v1/identity/init',
      undefined,
      await signInBody({ request: (method, route) => call(a, method, route, undefined, {}) }, a.url),
    );
    assert.ok(signedIn.status < 300, JSON.stringify(signedIn.body));
    const session = signedIn.body.session as string;
    const treasuryPat = (await call(a, 'POST', '/v1/pats', session, { scope_type: 'treasury' })).body.pat as string;
    const pat = (
      await call(a, 'POST', '/v1/pats', session, {
        scope_type: 'agent',
        ...(dailyCapUsd === null ? {} : { daily_cap_usd: dailyCapUsd }),
      })
    ).body as { id: string; pat: string };
    const wallets = await Promise.all(
      ['a', 'b'].map(async (label) => (await call(a, 'POST', '/v1/wallets', treasuryPat, { label })).body.id as string),
    );
    const setCap = async (usd: string) => {
      const patched = await call(a, 'PATCH', `/v1/pats/${pat.id}`, session, { daily_cap_usd: usd });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
    };
    return { pat, wallets, setCap };
  }

  /** A payment of `amount` (micro-USDC) from `walletId` with the bearer `token`, through `api`. */
  const pay = (api: ApiProcess, token: string, walletId: string, amount: string) =>
    call(api, 'POST', `/v1/wallets/${walletId}/pay`, token, {
      payment_requirements: paymentRequirements({ amount, maxTimeoutSeconds: 120 }),
    });

  /** `count` payments of `amount` at once through `b`, across the wallets. */
  const storm = (token: string, wallets: string[], count: number, amount: string) =>
    Promise.all(Array.from({ length: count }, (_, i) => pay(b, token, wallets[i % wallets.length]!, amount)));

  /** Exactly `passed` answered 200 and every other one the cap refusal naming `capUsd`. */
  function assertRefusedPastCap(results: Answer[], passed: number, capUsd: string) {
    const odd = results.find((r) => r.status !== 200 && !(r.status === 429 && r.body.error_code === 'MGMT_6014'));
    assert.equal(odd, undefined, JSON.stringify(odd?.body));
    assert.equal(
      results.filter((r) => r.status === 200).length,
      passed,
      `statuses: ${JSON.stringify(results.map((r) => r.status))}`,
    );
    for (const r of results.filter((r) => r.status === 429)) {
      assert.equal(r.body.recovery.kind, 'raise_pat_cap');
      assert.equal(r.body.recovery.current_cap_usd, capUsd, 'the refusal names the cap now set');
    }
  }

  /** The PAT's stored days as [spent_micro, cap_micro], and how many authorizations its wallets hold. */
  async function stored(patId: string, wallets: string[]) {
    const days = await db.knex('pat_spend_totals').where({ token_id: patId });
    const authorizations = await db.knex('authorizations').whereIn('wallet_id', wallets);
    return {
      days: days.map((r: { spent_micro: unknown; cap_micro: unknown }) => [String(r.spent_micro), String(r.cap_micro)]),
      authorizations: authorizations.length,
    };
  }

  /** `api`'s PAT cap checks so far that read the day under the PAT's lock, or were decided on its remembered total. */
  const patCapChecks = async (api: ApiProcess, source: 'read' | 'remembered') =>
    Number(
      (await (await fetch(`${api.url}/metrics`)).text()).match(
        new RegExp(`treasury_pat_cap_checks_total\\{source="${source}"\\} (\\d+)`),
      )?.[1] ?? 0,
    );

  it('lowered: payments decided on the total the other process remembers all answer the cap refusal; the day stays at the new cap', async () => {
    const { pat, wallets, setCap } = await buyer('10');
    // `b` caches the bearer (cap 10) and remembers the day's total (0.01).
    assert.equal((await pay(b, pat.pat, wallets[0]!, '10000')).status, 200);
    const rememberedBefore = await patCapChecks(b, 'remembered');
    await setCap('0.01');
    assertRefusedPastCap(await storm(pat.pat, wallets, 20, '100000'), 0, '0.01');
    assert.ok((await patCapChecks(b, 'remembered')) > rememberedBefore, 'decided on the remembered total first');
    // Nothing was written since the cap changed: the day keeps the cap of its last write, and its total.
    assert.deepEqual(await stored(pat.id, wallets), { days: [['10000', '10000000']], authorizations: 1 });
  });

  it('lowered: payments decided under the PAT lock (the other process has not read the day) pass only while the new cap has room', async () => {
    const { pat, wallets, setCap } = await buyer('10');
    assert.equal((await pay(a, pat.pat, wallets[0]!, '10000')).status, 200);
    // `b` caches the bearer (cap 10) without reading the day: its payments read it under the PAT's lock.
    assert.equal((await call(b, 'GET', `/v1/wallets/${wallets[0]}/policy`, pat.pat)).status, 200);
    const readsBefore = await patCapChecks(b, 'read');
    await setCap('0.05');
    assertRefusedPastCap(await storm(pat.pat, wallets, 20, '10000'), 4, '0.05');
    assert.ok((await patCapChecks(b, 'read')) > readsBefore, 'decided under the PAT lock');
    assert.deepEqual(await stored(pat.id, wallets), { days: [['50000', '50000']], authorizations: 5 });
  });

  it('set on a PAT that had none: the other process, whose cache says uncapped, passes only what the cap has room for', async () => {
    const { pat, wallets, setCap } = await buyer(null);
    assert.equal((await pay(b, pat.pat, wallets[0]!, '10000')).status, 200);
    await setCap('0.05');
    assertRefusedPastCap(await storm(pat.pat, wallets, 20, '10000'), 4, '0.05');
    assert.deepEqual(await stored(pat.id, wallets), { days: [['50000', '50000']], authorizations: 5 });
  });

  it("lowered: a session exchanged from the PAT spends as its PAT, against the PAT's new cap", async () => {
    const { pat, wallets, setCap } = await buyer('10');
    const exchanged = await call(b, 'POST', '/v1/identity/exchange-pat', pat.pat);
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    const session = exchanged.body.session as string;
    assert.equal((await pay(b, session, wallets[0]!, '10000')).status, 200);
    await setCap('0.03');
    assertRefusedPastCap(await storm(session, wallets, 10, '10000'), 2, '0.03');
    assert.deepEqual(await stored(pat.id, wallets), { days: [['30000', '30000']], authorizations: 3 });
  });
});

/**
 * `treasury_auth_failures_total` counts every request refused at authentication, by its error code, whichever
 * route or bearer kind it was (docs/operations.md): no bearer, an unknown token, a malformed one, a sign-in whose
 * signature does not match. A request that authenticates counts nothing.
 */
import assert from 'node:assert/strict';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';

describe('treasury_auth_failures_total', function () {
  this.timeout(120_000);
  let t: TestTreasury;
  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  const count = async (code: string) => {
    const text = (await t.request('GET', '/metrics')).body as string;
    const line = text.split('\n').find((l) => l.startsWith(`treasury_auth_failures_total{error_code="${code}"}`));
    return Number(line?.split(' ').pop() ?? 0);
  };

  it('counts each 401 by its code, on platform and Treasury routes, and nothing for a good bearer', async () => {
    const before = { unauthorized: await count('unauthorized'), invalid_token: await count('invalid_token') };
    assert.equal((await t.request('GET', '/v1/wallets')).status, 401);
    assert.equal((await t.request('GET', '/v1/pats', {})).status, 401);
    assert.equal(
      (await t.request('GET', '/v1/wallets', { token: 'xx_pat_unknown0000000000000000000000' })).status,
      401,
    );
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: 'as_not-a-session' })).status, 401);
    assert.equal(await count('unauthorized'), before.unauthorized + 2);
    assert.equal(await count('invalid_token'), before.invalid_token + 2);

    const { session } = await signInWithNewKey(t);
    const good = await t.request('GET', '/v1/auth/whoami', { token: session });
    assert.equal(good.status, 200, JSON.stringify(good.body));
    assert.equal(await count('unauthorized'), before.unauthorized + 2);
    assert.equal(await count('invalid_token'), before.invalid_token + 2);
  });
});

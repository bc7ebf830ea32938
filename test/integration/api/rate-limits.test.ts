/**
 * Rate limits through HTTP (real PostgreSQL, real signer): with the production defaults, 400 rapid nonce
 * requests from one address meet 429 `rate_limited` with Retry-After; a limited address is served again
 * once the window passed; sign-ins (`init`, an account and an HSM key each) are limited per address; a
 * token's calls per token, whoever else calls; the pay routes per token; an address's refused bearers past
 * its count answer 429 while its valid ones pass; X-Forwarded-For counts only from
 * a configured trusted proxy, and IPv6 clients are counted per /64; while PostgreSQL is out of reach the
 * limits are kept in memory (no 500, no limit lifted); two API processes on one database share the counts.
 * Also: used and expired sign-in nonces are purged.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { useTestTreasury } from '../../support/api-harness.js';
import { useGatedTestTreasury } from '../../support/database-outage.js';
import { signInBody } from '../../support/sign-in.js';
import { RateLimits } from '../../../src/api/http/middleware/rate-limit.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';

/** Runs `count` calls of `call`, `concurrency` at a time; the answers in order. */
async function flood<T>(count: number, concurrency: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) out[i] = await call(i);
    }),
  );
  return out;
}

function assertRateLimited(res: { status: number; body: any; headers: Headers }, bucket: string): void {
  assert.equal(res.status, 429, JSON.stringify(res.body));
  assert.equal(res.body.error_code, 'rate_limited');
  assert.equal(res.body.bucket, bucket);
  const retryAfter = res.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^[1-9][0-9]*$/, 'Retry-After in whole seconds');
  assert.equal(res.body.retry_after_seconds, Number(retryAfter));
  assert.deepEqual(res.body.recovery, { kind: 'retry_later', retry_after_seconds: Number(retryAfter) });
}

describe('rate limits (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);

  describe('with the production defaults', () => {
    const t = useTestTreasury({ productionRateLimits: true });

    it('the clean-up the app runs on its own timer (stopped at shutdown) deletes the rows expired over an hour ago, and only those', async () => {
      const now = Date.now();
      await t.db.knex('rate_limits').insert([
        { key: 'nonce:cleanup-old', points: 1, expire: now - 2 * 3_600_000 },
        { key: 'nonce:cleanup-recent', points: 1, expire: now - 60_000 },
        { key: 'nonce:cleanup-live', points: 1, expire: now + 60_000 },
      ]);
      const limits = new RateLimits(
        {
          enabled: true,
          windowSeconds: 60,
          nonce: 10,
          init: 10,
          token: 10,
          account: 10,
          pay: 10,
          pay_account: 10,
          policy: 10,
          receipt: 10,
          discovery: 10,
          auth_failure: 10,
          auth_failure_token: 10,
        },
        t.db.knex,
        createTreasuryMetrics(),
      );
      await limits.clearExpired();
      const left = await t.db.knex('rate_limits').whereLike('key', 'nonce:cleanup-%').pluck('key');
      assert.deepEqual(left.sort(), ['nonce:cleanup-live', 'nonce:cleanup-recent']);
    });

    it('400 rapid nonce requests from one address meet 429 rate_limited with Retry-After, and few nonces are stored', async () => {
      const answers = await flood(400, 16, () => t.request('POST', '/v1/identity/nonce'));
      const limited = answers.filter((a) => a.status === 429);
      const issued = answers.filter((a) => a.status === 201);
      assert.ok(limited.length > 0, 'some requests are refused');
      assert.ok(issued.length > 0 && issued.length < 100, `issued ${issued.length}`);
      assert.equal(issued.length + limited.length, 400);
      assertRateLimited(limited[0]!, 'nonce');
      const spoofed = await t.request('POST', '/v1/identity/nonce', { headers: { 'x-forwarded-for': '203.0.113.77' } });
      assert.equal(spoofed.status, 429, 'X-Forwarded-For from a peer that is no trusted proxy changes nothing');
      const stored = Number((await t.db.knex('identity_nonces').count({ n: '*' }).first())!.n);
      assert.equal(stored, issued.length);
      const metrics = (await t.request('GET', '/metrics')).body as string;
      assert.match(
        metrics,
        new RegExp(`treasury_rate_limited_total\\{bucket="nonce"\\} ${limited.length + 1}\\b`),
        'the 429s and the spoofed one',
      );
    });
  });

  describe('with small limits and a 2-second window', () => {
    let now = new Date();
    const t = useTestTreasury({
      clock: () => now,
      extraEnv: {
        TREASURY_RATE_LIMIT_WINDOW_SECONDS: '2',
        TREASURY_RATE_LIMIT_NONCE: '6',
        TREASURY_RATE_LIMIT_INIT: '3',
        TREASURY_RATE_LIMIT_TOKEN: '5',
        TREASURY_RATE_LIMIT_PAY: '4',
        TREASURY_RATE_LIMIT_AUTH_FAILURES: '5',
        TREASURY_TRUSTED_PROXIES: '127.0.0.1/32, ::1',
      },
    });
    const fresh = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    /** Requests as if from `client` through the trusted proxy on loopback. */
    const from = (client: string) => ({ headers: { 'x-forwarded-for': `203.0.113.9, ${client}` } });
    /** A sign-in body whose nonce was asked for from `client`. */
    const signInBodyFrom = (client: string) =>
      signInBody({ request: (m, p, o) => t.request(m, p, { ...o, ...from(client) }) });
    /** A session signed in from `client` (nonce and sign-in both from there). */
    const sessionFrom = async (client: string) =>
      (await t.request('POST', '/v1/identity/init', { body: await signInBodyFrom(client), ...from(client) })).body
        .session as string;

    it('a limited address is served again once the window passed', async () => {
      const client = `${fresh()}::1`;
      const answers = await flood(7, 1, () => t.request('POST', '/v1/identity/nonce', from(client)));
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 201, 201, 201, 201, 429],
      );
      assertRateLimited(answers[6]!, 'nonce');
      await sleep(Number(answers[6]!.headers.get('retry-after')) * 1000 + 100);
      assert.equal((await t.request('POST', '/v1/identity/nonce', from(client))).status, 201);
    });

    it('IPv6 clients are counted per /64; X-Forwarded-For is ignored unless the peer is a trusted proxy', async () => {
      const net64 = fresh();
      const spread = await flood(7, 1, (i) =>
        t.request('POST', '/v1/identity/nonce', from(`${net64}:${i.toString(16)}::${i + 1}`)),
      );
      assert.equal(spread.filter((a) => a.status === 429).length, 1, 'seven addresses of one /64 share its six');
      assert.equal(
        (await t.request('POST', '/v1/identity/nonce', from(`${fresh()}::1`))).status,
        201,
        'another /64 is its own',
      );
      // IPv4 and IPv4-mapped IPv6 are the same client.
      const v4 = `198.51.100.${1 + (randomBytes(1)[0]! % 200)}`;
      const mixed = await flood(7, 1, (i) =>
        t.request('POST', '/v1/identity/nonce', from(i % 2 ? `::ffff:${v4}` : v4)),
      );
      assert.equal(mixed.filter((a) => a.status === 429).length, 1);
    });

    it("another site's page spends none of the owner's address's sign-in or catalogue allowance: 403 cross_site_request, uncounted", async () => {
      const client = `${fresh()}::8`;
      const crossSite = (headers: Record<string, string>) => ({
        headers: { ...from(client).headers, 'sec-fetch-mode': 'no-cors', ...headers },
      });
      // A page elsewhere fires simple requests (text/plain, no preflight) at the sign-in and catalogue routes.
      for (const site of ['cross-site', 'same-site', 'CROSS-SITE']) {
        for (const [method, path] of [
          ['POST', '/v1/identity/nonce'],
          ['POST', '/v1/identity/init'],
          ['GET', '/discovery/resources'],
          ['GET', '/Discovery/Search/'],
        ] as const) {
          for (let i = 0; i < 8; i++) {
            const res = await t.request(
              method,
              path,
              crossSite({ 'sec-fetch-site': site, 'content-type': 'text/plain' }),
            );
            assert.equal(res.status, 403, `${site} ${method} ${path}`);
            assert.equal(res.body.error_code, 'cross_site_request');
            assert.equal(res.body.bucket, path.toLowerCase().includes('discovery') ? 'discovery' : path.split('/')[3]);
          }
        }
      }
      // The owner, from the same address, is served: the CLI (no Sec-Fetch-*), the dashboard (same-origin), a
      // top-level navigation from elsewhere to the catalogue.
      const session = await sessionFrom(client);
      assert.ok(session);
      const dashboard = await t.request('POST', '/v1/identity/nonce', crossSite({ 'sec-fetch-site': 'same-origin' }));
      assert.equal(dashboard.status, 201);
      const navigation = await t.request(
        'GET',
        '/discovery/resources',
        crossSite({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }),
      );
      assert.equal(navigation.status, 200);
    });

    it('sign-ins are limited per address: no account or key is created past the limit', async () => {
      const client = `${fresh()}::7`;
      const accountsBefore = Number((await t.db.knex('accounts').count({ n: '*' }).first())!.n);
      now = new Date();
      const bodies = await flood(5, 1, () => signInBodyFrom(client));
      // All at once: each is counted as it arrives, before its signature is checked or its key made.
      const answers = await flood(5, 5, (i) =>
        t.request('POST', '/v1/identity/init', { body: bodies[i], ...from(client) }),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 201, 201, 429, 429]);
      assertRateLimited(
        answers.find((a) => a.status === 429)!,
        'init',
      );
      const accountsAfter = Number((await t.db.knex('accounts').count({ n: '*' }).first())!.n);
      assert.equal(accountsAfter - accountsBefore, 3);
    });

    it("a token's calls are limited per token, and another token is not held back", async () => {
      now = new Date();
      const client = `${fresh()}::9`;
      const one = await sessionFrom(client);
      const two = await sessionFrom(client);
      const answers = await flood(6, 1, () => t.request('GET', '/v1/auth/whoami', { token: one }));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200, 200, 429],
      );
      assertRateLimited(answers[5]!, 'token');
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token: two })).status, 200);
      assert.equal(
        (await t.request('GET', '/v1/auth/whoami', { token: t.adminToken })).status,
        200,
        'the operator token is not limited',
      );
    });

    it('the pay routes are limited per token', async () => {
      const minted = await t.request('POST', '/v1/treasury', {
        token: t.adminToken,
        body: { owner_type: 'agent', owner_id: 'rate' },
      });
      const key = minted.body.api_key as string;
      const answers = await flood(5, 1, () =>
        t.request('POST', '/v1/wallets/wal_000000000000000000000000/pay', { token: key, body: {} }),
      );
      assert.ok(
        answers.slice(0, 4).every((a) => a.status !== 429),
        JSON.stringify(answers.map((a) => a.status)),
      );
      assertRateLimited(answers[4]!, 'pay');
    });

    it('an address guessing bearers gets 429 for them once it spent its 401s; a good token from there or elsewhere is not held back', async () => {
      now = new Date();
      const guesser = `${fresh()}::5`;
      const honest = `${fresh()}::6`;
      const session = await sessionFrom(honest);
      const guess = () => `xx_pat_${randomBytes(24).toString('base64url')}`;
      const answers = await flood(7, 1, () =>
        t.request('GET', '/v1/auth/whoami', { token: guess(), ...from(guesser) }),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [401, 401, 401, 401, 401, 429, 429],
      );
      assertRateLimited(answers[5]!, 'auth_failure');
      // Past its refused bearers the address's refused bearers answer 429; a real token from it still passes.
      assert.equal((await t.request('GET', '/v1/auth/whoami', { token: session, ...from(guesser) })).status, 200);
      assert.equal(
        (await t.request('GET', '/v1/auth/whoami', { token: session, ...from(honest) })).status,
        200,
        'another address is not held back',
      );
      await sleep(Number(answers[6]!.headers.get('retry-after')) * 1000 + 100);
      assert.equal(
        (await t.request('GET', '/v1/auth/whoami', { token: guess(), ...from(guesser) })).status,
        401,
        'a refused bearer is a 401 again after the window',
      );
    });

    it('used and expired nonces are purged', async () => {
      now = new Date();
      const client = `${fresh()}::5`;
      const unused = (await t.request('POST', '/v1/identity/nonce', from(client))).body.nonce as string;
      const body = await signInBodyFrom(client);
      const used = /Nonce: ([0-9a-f]+)/.exec(body.message)![1]!;
      assert.ok((await t.request('POST', '/v1/identity/init', { body, ...from(client) })).status < 300);
      assert.ok(
        await t.db.knex('identity_nonces').where({ nonce: used }).first(),
        'the used nonce is there until the next issue',
      );
      await t.request('POST', '/v1/identity/nonce', from(client));
      assert.equal(
        await t.db.knex('identity_nonces').where({ nonce: used }).first(),
        undefined,
        'a used nonce is purged',
      );
      assert.ok(await t.db.knex('identity_nonces').where({ nonce: unused }).first(), 'an unused live nonce stays');
      now = new Date(Date.now() + 11 * 60 * 1000);
      await t.request('POST', '/v1/identity/nonce', from(`${fresh()}::5`));
      assert.equal(
        await t.db.knex('identity_nonces').where({ nonce: unused }).first(),
        undefined,
        'an expired nonce is purged',
      );
      now = new Date();
    });
  });

  describe('while PostgreSQL refuses connections', () => {
    const { t, gate: admin } = useGatedTestTreasury({ extraEnv: { TREASURY_RATE_LIMIT_NONCE: '3' } });

    it("the limits hold in each process's memory: requests the limit allows answer 503 database_unavailable, the rest 429, none 500", async () => {
      await admin.refuse();
      const answers = await flood(5, 1, () => t.request('POST', '/v1/identity/nonce'));
      assert.deepEqual(
        answers.map((a) => a.body.error_code),
        ['database_unavailable', 'database_unavailable', 'database_unavailable', 'rate_limited', 'rate_limited'],
      );
      await admin.allow();
      // Once it is back, PostgreSQL's shared count (which saw none of them) decides again.
      const after = await t.request('POST', '/v1/identity/nonce');
      assert.equal(after.status, 201, JSON.stringify(after.body));
    });
  });

  describe('two API processes on one database', () => {
    let signer: TestSigner;
    let db: TestDatabase;
    const apis: ApiProcess[] = [];

    before(async () => {
      signer = await startTestSigner();
      db = await createTestDatabase();
      for (let i = 0; i < 2; i++) {
        apis.push(await startApiProcess(db, signer, { TREASURY_RATE_LIMIT_NONCE: '30' }));
      }
    });
    after(async () => {
      for (const api of apis) api.child.kill('SIGTERM');
      await sleep(500);
      await db?.drop();
      await signer?.stop();
    });

    it('share the count: 20 nonce requests to each of two processes, 30 allowed in all', async () => {
      const statuses = await flood(
        40,
        4,
        async (i) => (await fetch(`${apis[i % 2]!.url}/v1/identity/nonce`, { method: 'POST' })).status,
      );
      assert.equal(statuses.filter((s) => s === 201).length, 30, JSON.stringify(statuses));
      assert.equal(statuses.filter((s) => s === 429).length, 10);
    });
  });
});

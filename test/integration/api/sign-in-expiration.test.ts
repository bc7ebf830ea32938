/**
 * A sign-in never outlives the message the owner signed, through HTTP with real PostgreSQL and SoftHSM: a SIWE
 * or SIWS message's Expiration Time caps the session `POST /v1/identity/init` issues (its `expires_at`, the
 * stored row, and the bearer refused once it passes), and so does a SIWS attestation linked to a SIWE sign-in;
 * a message without one gets the session TTL. What is made within such a session (a `within_session` PAT, and
 * a session exchanged from that PAT) ends no later than it (credential-lineage.ts).
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { hashToken } from '../../../src/api/auth/token-codec.js';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { newSolanaSigner, siwsAttestation, siwsSignInBody } from '../../support/sign-in.js';

/** The session TTL the harness runs with (a day), in ms. */
const TTL_MS = 86_400_000;

describe('sign-in expiration caps the session (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;

  before(async () => {
    t = await startTestTreasury({ extraEnv: { TREASURY_SESSION_TTL_SECONDS: String(TTL_MS / 1000) } });
  });
  after(async () => {
    await t?.stop();
  });

  /** A SIWE `/v1/identity/init` body (a fresh key) whose message expires at `expirationTime`, if given. */
  async function siweBody(expirationTime?: Date): Promise<{ message: string; signature: string; chain: 'evm' }> {
    const who = privateKeyToAccount(generatePrivateKey());
    const nonce = await t.request('POST', '/v1/identity/nonce');
    assert.equal(nonce.status, 201, JSON.stringify(nonce.body));
    const message = createSiweMessage({
      domain: 'treasury.test',
      address: who.address,
      uri: 'http://treasury.test',
      version: '1',
      chainId: 84532,
      nonce: nonce.body.nonce,
      issuedAt: new Date(),
      ...(expirationTime ? { expirationTime } : {}),
    });
    return { message, signature: await who.signMessage({ message }), chain: 'evm' };
  }

  async function signIn(body: unknown): Promise<{ session: string; expires_at: string; agent_id: string }> {
    const res = await t.request('POST', '/v1/identity/init', { body });
    assert.ok(res.status === 200 || res.status === 201, JSON.stringify(res.body));
    return res.body;
  }

  const storedExpiry = async (token: string): Promise<number> =>
    new Date(
      (
        await t.db
          .knex('api_tokens')
          .where({ token_hash: hashToken(token) })
          .first('expires_at')
      ).expires_at,
    ).getTime();

  /** An instant in ms (messages, grants and rows all keep milliseconds). */
  const at = (d: Date | string) => new Date(d).getTime();

  it("SIWE: the message's Expiration Time caps the session, which is refused once it passes", async () => {
    const expiration = new Date(Date.now() + 3_000);
    const grant = await signIn(await siweBody(expiration));
    assert.ok(at(grant.expires_at) <= at(expiration), `${grant.expires_at} is after ${expiration.toISOString()}`);
    assert.ok((await storedExpiry(grant.session)) <= at(expiration));
    assert.equal((await t.request('GET', '/v1/auth/whoami', { token: grant.session })).status, 200);
    await sleep(Math.max(0, at(expiration) - Date.now()) + 250);
    const after = await t.request('GET', '/v1/auth/whoami', { token: grant.session });
    assert.deepEqual([after.status, after.body.error_code], [401, 'invalid_token']);
  });

  it('SIWE: two minutes out gives a two-minute session; no Expiration Time gives the session TTL', async () => {
    const expiration = new Date(Date.now() + 120_000);
    const capped = await signIn(await siweBody(expiration));
    assert.equal(at(capped.expires_at), at(expiration));
    assert.equal(await storedExpiry(capped.session), at(expiration));

    const before = Date.now();
    const open = await signIn(await siweBody());
    assert.ok(at(open.expires_at) >= before + TTL_MS, open.expires_at);
    // A far Expiration Time does not lengthen the session past the TTL.
    const far = await signIn(await siweBody(new Date(Date.now() + 3 * TTL_MS)));
    assert.ok(at(far.expires_at) <= Date.now() + TTL_MS, far.expires_at);
  });

  it("SIWS: the message's Expiration Time caps the session too", async () => {
    const expiration = new Date(Date.now() + 120_000);
    const grant = await signIn(
      await siwsSignInBody(t, newSolanaSigner(), { fields: { expirationTime: expiration.toISOString() } }),
    );
    assert.equal(at(grant.expires_at), at(expiration));
    assert.equal(await storedExpiry(grant.session), at(expiration));
  });

  it('a SIWS attestation linked to a SIWE sign-in caps the session when it expires first', async () => {
    const siwe = await siweBody(new Date(Date.now() + 300_000));
    const nonce = /\nNonce: (\S+)/.exec(siwe.message)![1]!;
    const linkExpiration = new Date(Date.now() + 90_000);
    const grant = await signIn({
      ...siwe,
      link_solana: siwsAttestation(newSolanaSigner(), nonce, {
        fields: { expirationTime: linkExpiration.toISOString() },
      }),
    });
    assert.equal(at(grant.expires_at), at(linkExpiration));
  });

  it('what is made within a capped session ends no later than it: a within_session PAT, its exchanged session', async () => {
    const expiration = new Date(Date.now() + 120_000);
    const owner = await signIn(await siweBody(expiration));
    const pat = await t.request('POST', '/v1/pats', {
      token: owner.session,
      body: { scope_type: 'agent', scope_id: owner.agent_id, within_session: true },
    });
    assert.equal(pat.status, 201, JSON.stringify(pat.body));
    assert.ok(pat.body.expires_at && at(pat.body.expires_at) <= at(expiration), JSON.stringify(pat.body));
    const exchanged = await t.request('POST', '/v1/identity/exchange-pat', { token: pat.body.pat });
    assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
    assert.ok(at(exchanged.body.expires_at) <= at(expiration), exchanged.body.expires_at);
  });
});

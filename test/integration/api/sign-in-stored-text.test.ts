/**
 * A sign-in message is stored with the session it signs in (`api_tokens.sign_in_message`) and later shown to
 * the signer as the owner's proof, so it is held to the stored-prose rule (src/shared/storable-text.ts), through
 * HTTP with real PostgreSQL and SoftHSM: a SIWE or SIWS message, validly signed, whose statement holds a bidi
 * override, ESC, BEL, a C1 control, a zero width space or a tag character is 400 `invalid_request`, and no
 * account or session is made; the same message without them signs in.
 */
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { siwsSignInBody } from '../../support/sign-in.js';

/** Characters the stored-prose rule refuses, each named for the failure message. */
const UNSTORABLE: ReadonlyArray<[string, string]> = [
  ['U+202E right-to-left override', '\u202e'],
  ['ESC', '\u001b'],
  ['BEL', '\u0007'],
  ['C1 control U+009B', '\u009b'],
  ['U+200B zero width space', '\u200b'],
  ['tag character U+E0041', '\u{e0041}'],
];

describe('a sign-in message is storable prose (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  let t: TestTreasury;

  before(async () => {
    t = await startTestTreasury();
  });
  after(async () => {
    await t?.stop();
  });

  /** A SIWE `/v1/identity/init` body (a fresh key) with `statement`, signed. */
  async function siweBody(statement: string): Promise<{ message: string; signature: string; chain: 'evm' }> {
    const who = privateKeyToAccount(generatePrivateKey());
    const nonce = await t.request('POST', '/v1/identity/nonce');
    assert.equal(nonce.status, 201, JSON.stringify(nonce.body));
    const message = createSiweMessage({
      domain: 'treasury.test',
      address: who.address,
      statement,
      uri: 'http://treasury.test',
      version: '1',
      chainId: 84532,
      nonce: nonce.body.nonce,
      issuedAt: new Date(),
    });
    return { message, signature: await who.signMessage({ message }), chain: 'evm' };
  }

  /** Rows a sign-in would make: sessions and accounts. */
  async function counts(): Promise<{ sessions: number; accounts: number }> {
    const [s] = (await t.db.knex('api_tokens').where({ kind: 'session' }).count('* as n')) as [{ n: string }];
    const [a] = (await t.db.knex('accounts').count('* as n')) as [{ n: string }];
    return { sessions: Number(s.n), accounts: Number(a.n) };
  }

  async function refused(what: string, body: unknown): Promise<void> {
    const before = await counts();
    const res = await t.request('POST', '/v1/identity/init', { body });
    assert.deepEqual(
      [res.status, res.body?.error_code],
      [400, 'invalid_request'],
      `${what}: ${JSON.stringify(res.body)}`,
    );
    assert.deepEqual(await counts(), before, `${what}: nothing stored`);
  }

  it('SIWE: a signed message whose statement holds an unstorable character is 400 invalid_request, nothing stored', async () => {
    for (const [what, char] of UNSTORABLE) await refused(what, await siweBody(`Sign in to Treasury ${char}now`));
  });

  it('SIWS: likewise', async () => {
    for (const [what, char] of UNSTORABLE)
      await refused(what, await siwsSignInBody(t, undefined, { fields: { statement: `Sign in ${char}now` } }));
  });

  it('the same messages without them sign in (ZWJ allowed), and the message is stored as sent', async () => {
    const body = await siweBody('Sign in to Treasury \u{1f469}\u200d\u{1f4bb} now');
    const res = await t.request('POST', '/v1/identity/init', { body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const row = await t.db.knex('api_tokens').where({ kind: 'session', account_id: res.body.account_id }).first();
    assert.equal(row.sign_in_message, body.message);
    const solana = await t.request('POST', '/v1/identity/init', { body: await siwsSignInBody(t) });
    assert.equal(solana.status, 201, JSON.stringify(solana.body));
  });
});

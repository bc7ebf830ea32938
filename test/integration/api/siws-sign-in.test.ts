/**
 * Sign In With Solana through HTTP with real PostgreSQL and the real signer (docs/security-model.md, "Sign In
 * With Solana"): a SIWS sign-in yields a session; a SIWE sign-in carrying a SIWS attestation (same nonce) links
 * the Solana address to the account, and a SIWS sign-in then lands in that account; a signature by another
 * key, a message naming another address, a wrong domain or URI, a reused nonce, an expired or stale message,
 * a malformed timestamp, another chain and a non-canonical text are refused with the codes SIWE uses, as is a
 * sign-in or link as a small-order key (an address nobody holds) with the signature anyone can make for it, and
 * hostile values with a 4xx and a stable code, creating nothing; a Solana address linked to one account is
 * never linked to another (`identity_already_linked`, 409), even by two sign-ins at once.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ERROR_CODES, type ErrorCode } from '../../../src/shared/error-codes.js';
import { useTestTreasury } from '../../support/api-harness.js';
import { baselineMs, boundFrom, timeMs } from '../../support/relative-budget.js';
import {
  newSolanaSigner,
  signInBody,
  siwsAttestation,
  siwsSignInBody,
  type SolanaSigner,
} from '../../support/sign-in.js';

const hostile = JSON.parse(
  fs.readFileSync(path.resolve(import.meta.dirname, '../../vectors/hostile-inputs.json'), 'utf8'),
) as Record<string, unknown[]>;

describe('Sign In With Solana (HTTP, PostgreSQL, SoftHSM)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();

  const init = (body: unknown) => t.request('POST', '/v1/identity/init', { body });
  async function nonce(): Promise<string> {
    const res = await t.request('POST', '/v1/identity/nonce');
    assert.equal(res.status, 201);
    return res.body.nonce;
  }
  /** A SIWE body for a fresh EVM key, with `who`'s SIWS attestation over the same nonce in link_solana. */
  async function siweLinking(who: SolanaSigner, evm = privateKeyToAccount(generatePrivateKey())) {
    const body = await signInBody(t, undefined, evm);
    const siweNonce = /\nNonce: (\S+)/.exec(body.message)![1]!;
    return { ...body, link_solana: siwsAttestation(who, siweNonce) };
  }
  function refusedWith(res: { status: number; body: any }, code: ErrorCode, what: string): void {
    assert.equal(res.body?.error_code, code, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.status, ERROR_CODES[code].status, what);
  }
  const solanaIdentity = (address: string) =>
    t.db.knex('identities').where({ chain: 'solana', address }).first('account_id', 'linked_at');

  it('a SIWS sign-in creates the account and yields an as_ session; the next one lands in the same account', async () => {
    const who = newSolanaSigner();
    const first = await init(await siwsSignInBody(t, who));
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.match(first.body.session, /^as_/);
    const me = await t.request('GET', '/v1/auth/whoami', { token: first.body.session });
    assert.equal(me.status, 200);
    assert.deepEqual(
      [me.body.auth_type, me.body.scope_type, me.body.scope_id],
      ['session', 'account', first.body.account_id],
    );
    const identity = await solanaIdentity(who.address);
    assert.equal(identity.account_id, first.body.account_id);
    assert.equal(identity.linked_at, null, 'its own first sign-in, not a link');
    const again = await init(await siwsSignInBody(t, who));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual([again.body.account_id, again.body.agent_id], [first.body.account_id, first.body.agent_id]);
  });

  it('SIWE with a SIWS attestation links the Solana address; a SIWS sign-in then reaches the same account', async () => {
    const who = newSolanaSigner();
    const evm = privateKeyToAccount(generatePrivateKey());
    const linked = await init(await siweLinking(who, evm));
    assert.equal(linked.status, 201, JSON.stringify(linked.body));
    const identity = await solanaIdentity(who.address);
    assert.equal(identity.account_id, linked.body.account_id);
    assert.ok(identity.linked_at instanceof Date);

    const solana = await init(await siwsSignInBody(t, who));
    assert.equal(solana.status, 200, JSON.stringify(solana.body));
    assert.equal(solana.body.account_id, linked.body.account_id);
    assert.equal(solana.body.agent_id, linked.body.agent_id);
    // Linking again from the same pair is a plain sign-in.
    const relinked = await init(await siweLinking(who, evm));
    assert.equal(relinked.status, 200, JSON.stringify(relinked.body));
    assert.equal(relinked.body.account_id, linked.body.account_id);
    const accounts = await t.db.knex('identities').whereIn('address', [who.address, evm.address.toLowerCase()]);
    assert.deepEqual(
      accounts.map((r) => r.account_id),
      [linked.body.account_id, linked.body.account_id],
    );

    // A Solana key that signed in alone first: SIWE with its attestation lands in its account, linking the EVM key.
    const solo = newSolanaSigner();
    const soloAccount = (await init(await siwsSignInBody(t, solo))).body.account_id;
    const evm2 = privateKeyToAccount(generatePrivateKey());
    const joined = await init(await siweLinking(solo, evm2));
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.equal(joined.body.account_id, soloAccount);
    assert.equal((await init(await signInBody(t, undefined, evm2))).body.account_id, soloAccount);
  });

  it('a Solana address linked to account A is never linked to account B (409 identity_already_linked), even at once', async () => {
    const who = newSolanaSigner();
    const a = await init(await siweLinking(who));
    assert.equal(a.status, 201, JSON.stringify(a.body));
    const evmB = privateKeyToAccount(generatePrivateKey());
    const b = (await init(await signInBody(t, undefined, evmB))).body.account_id as string;
    const refused = await init(await siweLinking(who, evmB));
    refusedWith(refused, 'identity_already_linked', 'link to B');
    assert.deepEqual([refused.body.chain, refused.body.address], ['solana', who.address]);
    assert.equal((await solanaIdentity(who.address)).account_id, a.body.account_id);
    assert.equal((await init(await siwsSignInBody(t, who))).body.account_id, a.body.account_id);
    assert.equal((await init(await signInBody(t, undefined, evmB))).body.account_id, b, 'B is unchanged');

    // Two accounts race to link one fresh Solana address: exactly one wins.
    const contested = newSolanaSigner();
    const [x, y] = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
    for (const evm of [x, y]) assert.equal((await init(await signInBody(t, undefined, evm))).status, 201);
    const bodies = [await siweLinking(contested, x), await siweLinking(contested, y)];
    const answers = await Promise.all(bodies.map(init));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409], JSON.stringify(answers.map((r) => r.body)));
    const winner = answers.find((r) => r.status === 200)!.body.account_id;
    assert.equal((await solanaIdentity(contested.address)).account_id, winner);
  });

  it('forged, foreign, replayed, expired, stale or malformed SIWS messages are refused with the SIWE codes', async () => {
    const who = newSolanaSigner();
    const countAccounts = async () => Number((await t.db.knex('accounts').count({ n: '*' }))[0]!.n);
    const before = await countAccounts();
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

    refusedWith(
      await init(await siwsSignInBody(t, who, { signer: newSolanaSigner() })),
      'sign_in_signature_invalid',
      'signed by another key',
    );
    // The message names another address than public_key (and public_key's key signed it).
    const other = newSolanaSigner();
    const renamed = await siwsSignInBody(t, who, { signer: other });
    refusedWith(await init({ ...renamed, public_key: other.address }), 'sign_in_signature_invalid', 'other address');
    const body = await siwsSignInBody(t, who);
    refusedWith(
      await init({ ...body, message: body.message.replace('Sign in', 'Sign on') }),
      'sign_in_signature_invalid',
      'tampered',
    );
    refusedWith(
      await init({ ...body, signature: base58.encode(new Uint8Array(63).fill(7)) }),
      'sign_in_signature_invalid',
      '63-byte signature',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { origin: 'http://evil.test' })),
      'sign_in_domain_mismatch',
      'wrong domain',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { uri: 'http://evil.test/login' } })),
      'sign_in_domain_mismatch',
      'URI elsewhere',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { issuedAt: minutesAgo(3), expirationTime: minutesAgo(1) } })),
      'sign_in_expired',
      'expired',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { issuedAt: minutesAgo(30) } })),
      'sign_in_expired',
      'issued too long ago',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { expirationTime: 'next tuesday' } })),
      'sign_in_message_invalid',
      'malformed Expiration Time',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { chainId: 'eip155:1' } })),
      'sign_in_chain_not_supported',
      'another chain',
    );
    refusedWith(
      await init(await siwsSignInBody(t, who, { fields: { version: '2' } })),
      'sign_in_message_invalid',
      'version 2',
    );
    refusedWith(
      await init({ chain: 'solana', ...siwsAttestation(who, 'a1b2c3d4e5f6a7b8c9d0') }),
      'sign_in_nonce_invalid',
      'a nonce the server never issued',
    );
    // Not the canonical layout (a trailing newline), though signed: refused before the signature counts.
    const n = await nonce();
    const canonical = siwsAttestation(who, n);
    const message = `${canonical.message}\n`;
    const signature = base58.encode(ed25519.sign(new TextEncoder().encode(message), who.secret));
    refusedWith(
      await init({ chain: 'solana', message, signature, public_key: who.address }),
      'sign_in_message_invalid',
      'trailing newline',
    );
    refusedWith(
      await init({ chain: 'solana', message: 'hello', signature: canonical.signature, public_key: who.address }),
      'sign_in_message_invalid',
      'not a SIWS message',
    );
    assert.equal(await countAccounts(), before, 'no refused sign-in created an account');

    // Single use: the first sign-in consumes the nonce, its replay is refused.
    const once = await siwsSignInBody(t, who);
    assert.equal((await init(once)).status, 201);
    refusedWith(await init(once), 'sign_in_nonce_invalid', 'replayed');
  });

  it('a link whose attestation is forged, foreign or over another nonce signs nobody in and links nothing', async () => {
    const who = newSolanaSigner();
    const evm = privateKeyToAccount(generatePrivateKey());
    const base = await signInBody(t, undefined, evm);
    const siweNonce = /\nNonce: (\S+)/.exec(base.message)![1]!;
    const cases: Array<[ErrorCode, unknown, string]> = [
      ['sign_in_nonce_invalid', siwsAttestation(who, await nonce()), 'another nonce'],
      ['sign_in_signature_invalid', siwsAttestation(who, siweNonce, { signer: newSolanaSigner() }), 'forged'],
      ['sign_in_domain_mismatch', siwsAttestation(who, siweNonce, { origin: 'http://evil.test' }), 'foreign'],
    ];
    for (const [code, link_solana, what] of cases) refusedWith(await init({ ...base, link_solana }), code, what);
    assert.equal(await solanaIdentity(who.address), undefined);
    assert.equal(await t.db.knex('identities').where({ address: evm.address.toLowerCase() }).first(), undefined);
    // The SIWE message's nonce was not consumed by the refusals: the same sign-in, with a good link, succeeds.
    const ok = await init({ ...base, link_solana: siwsAttestation(who, siweNonce) });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
  });

  it('a small-order key (an address nobody holds) with the signature anyone can make for it signs in as nobody', async () => {
    // R = identity, S = 0: verifies any message for these keys under lenient (ZIP-215) Ed25519 rules.
    const forged = '2AFv15MNPuA84RmU66xw2uMzGipcVxNpzAffoacGVvjFue3CBmf633fAWuiP9cwL9C3z3CJiGgRSFjJfeEcA6QX';
    const evm = privateKeyToAccount(generatePrivateKey());
    for (const address of ['11111111111111111111111111111111', '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM']) {
      const nobody = { secret: newSolanaSigner().secret, address };
      const body = await siwsSignInBody(t, nobody);
      refusedWith(await init({ ...body, signature: forged }), 'sign_in_signature_invalid', `sign-in as ${address}`);
      const base = await signInBody(t, undefined, evm);
      const siweNonce = /\nNonce: (\S+)/.exec(base.message)![1]!;
      const link_solana = { ...siwsAttestation(nobody, siweNonce), signature: forged };
      refusedWith(await init({ ...base, link_solana }), 'sign_in_signature_invalid', `link of ${address}`);
      assert.equal(await solanaIdentity(address), undefined, 'no identity for an address nobody holds');
    }
  });

  it('hostile values in a SIWS body or a link answer 4xx with a stable code, never 500, and create nothing', async function () {
    this.timeout(300_000);
    const count = async () =>
      Number((await t.db.knex('api_tokens').count({ n: '*' }))[0]!.n) +
      Number((await t.db.knex('identities').count({ n: '*' }))[0]!.n);
    const before = await count();
    const refused = async (body: unknown, what: string) => {
      const res = await init(body);
      assert.ok(
        res.status >= 400 && res.status < 500 && res.body?.error_code in ERROR_CODES,
        `${what} ${String(JSON.stringify(body)).slice(0, 80)} → ${res.status} ${JSON.stringify(res.body)}`,
      );
    };
    const who = newSolanaSigner();
    const valid = siwsAttestation(who, await nonce());
    const siwe = await signInBody(t);
    const values = [...hostile.any!, ...hostile.free_text!, ...hostile.identifier!, ...hostile.bearer!];
    for (const value of values) {
      for (const field of ['message', 'signature', 'public_key', 'chain']) {
        await refused({ chain: 'solana', ...valid, [field]: value }, `solana ${field}`);
        if (field !== 'chain') await refused({ ...siwe, link_solana: { ...valid, [field]: value } }, `link ${field}`);
      }
      await refused({ ...siwe, link_solana: value }, 'link_solana');
    }
    for (const raw of hostile.raw_bodies as string[]) {
      const res = await t.request('POST', '/v1/identity/init', { rawBody: raw });
      assert.ok(res.status >= 400 && res.status < 500, raw);
    }
    // Texts shaped to make a message parser backtrack, at the size bound: 4xx, each within a bound set by a
    // plain text of the same size after the same header (a baseline measured here, under the machine's present
    // load: test/support/relative-budget.ts). A backtracking parser takes seconds to years on these.
    const header = 'treasury.test wants you to sign in with your Solana account:\n';
    const plain = (header + `${who.address}\n\n`).padEnd(4096, 'x');
    const bound = boundFrom(await baselineMs(() => refused({ chain: 'solana', ...valid, message: plain }, 'plain')));
    for (const message of [
      header + `${who.address}\n\n` + '\n'.repeat(3900),
      header + `${who.address}\n\n` + 'URI: x\nVersion: 1\n'.repeat(200),
      ' wants you to sign in with your Solana account:'.repeat(85),
      header.repeat(60),
    ]) {
      const took = await timeMs(() =>
        refused({ chain: 'solana', ...valid, message: message.slice(0, 4096) }, 'backtracking'),
      );
      assert.ok(took < bound, `answered in ${Math.round(took)} ms, over ${Math.round(bound)} ms`);
    }
    await refused({ chain: 'solana', ...valid, message: `${valid.message}\n${'x'.repeat(4096)}` }, 'over 4 KB');
    await refused({ chain: 'solana', ...valid, public_key: '1'.repeat(45) }, 'public_key over 44');
    await refused({ chain: 'solana', ...valid, signature: '1'.repeat(89) }, 'signature over 88');
    await refused({ chain: 'solana', ...valid, extra: true }, 'unknown key');
    await refused({ ...siwe, link_solana: { ...valid, extra: true } }, 'unknown key in link');
    assert.equal(await count(), before);
  });
});

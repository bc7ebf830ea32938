/**
 * Signing in to a test Treasury with a fresh EVM key (SIWE, viem-signed): the `/v1/identity/init` body, and
 * the whole sign-in returning the session grant; and Sign In With Solana bodies and attestations (the
 * message by `@solana/wallet-standard-util`, signed with @noble/curves ed25519).
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { TestTreasury } from './api-harness.js';

/** What a sign-in needs of the API: a POST with a JSON body (the nonce is asked for with none). */
export interface SignInApi {
  request(method: string, path: string, options?: { body?: unknown }): Promise<{ status: number; body: any }>;
}

/**
 * The `/v1/identity/init` body for `who` (a fresh key by default): a SIWE message naming `origin` (its host as
 * the domain) with a nonce asked of `api` (which must answer 201), and its signature.
 */
export async function signInBody(
  api: SignInApi,
  origin = 'http://treasury.test',
  who: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey()),
): Promise<{ message: string; signature: string; chain: 'evm' }> {
  const nonce = await api.request('POST', '/v1/identity/nonce');
  assert.equal(nonce.status, 201, JSON.stringify(nonce.body));
  const message = createSiweMessage({
    domain: new URL(origin).host,
    address: who.address,
    uri: origin,
    version: '1',
    chainId: 84532,
    nonce: nonce.body.nonce,
    issuedAt: new Date(),
  });
  return { message, signature: await who.signMessage({ message }), chain: 'evm' };
}

/** Signs in with a fresh key; the session grant and the key's address. */
export async function signInWithNewKey(
  t: Pick<TestTreasury, 'request'>,
): Promise<{ session: string; account_id: string; agent_id: string; expires_at: string; address: `0x${string}` }> {
  const who = privateKeyToAccount(generatePrivateKey());
  const res = await t.request('POST', '/v1/identity/init', { body: await signInBody(t, undefined, who) });
  if (res.status >= 300) throw new Error(`sign-in failed: ${JSON.stringify(res.body)}`);
  return { ...res.body, address: who.address };
}

/** A Solana key for Sign In With Solana: the ed25519 secret and its base58 address. */
export interface SolanaSigner {
  secret: Uint8Array;
  address: string;
}

export function newSolanaSigner(): SolanaSigner {
  const secret = ed25519.utils.randomSecretKey();
  return { secret, address: base58.encode(ed25519.getPublicKey(secret)) };
}

/**
 * A SIWS attestation (`{ message, signature, public_key }`) by `who` over `nonce`, the message made by
 * `@solana/wallet-standard-util` naming `origin` (its host as the domain, itself as the URI); `fields`
 * overrides any message field, `signer` signs instead of `who` (a forgery).
 */
export function siwsAttestation(
  who: SolanaSigner,
  nonce: string,
  options: {
    origin?: string;
    fields?: Partial<Parameters<typeof createSignInMessageText>[0]>;
    signer?: SolanaSigner;
  } = {},
): { message: string; signature: string; public_key: string } {
  const origin = options.origin ?? 'http://treasury.test';
  const message = createSignInMessageText({
    domain: new URL(origin).host,
    address: who.address,
    statement: 'Sign in to Treasury',
    uri: origin,
    version: '1',
    chainId: 'mainnet',
    nonce,
    issuedAt: new Date().toISOString(),
    ...options.fields,
  });
  const signature = ed25519.sign(new TextEncoder().encode(message), (options.signer ?? who).secret);
  return { message, signature: base58.encode(signature), public_key: who.address };
}

/** The `/v1/identity/init` body of a SIWS sign-in by `who` (a fresh key by default), with a nonce asked of `api`. */
export async function siwsSignInBody(
  api: SignInApi,
  who: SolanaSigner = newSolanaSigner(),
  options: Parameters<typeof siwsAttestation>[2] = {},
): Promise<{ chain: 'solana'; message: string; signature: string; public_key: string }> {
  const nonce = await api.request('POST', '/v1/identity/nonce');
  assert.equal(nonce.status, 201, JSON.stringify(nonce.body));
  return { chain: 'solana', ...siwsAttestation(who, nonce.body.nonce, options) };
}

/**
 * Signs in with `body` (a SIWE or SIWS `/v1/identity/init` body) and mints a Treasury PAT of the account the sign-in
 * landed in: the session and the PAT.
 */
export async function signInWithTreasuryPat(
  t: Pick<TestTreasury, 'request'>,
  body: Record<string, unknown>,
): Promise<{ session: string; agentId: string; pat: string }> {
  const signedIn = await t.request('POST', '/v1/identity/init', { body });
  assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
  const minted = await t.request('POST', '/v1/pats', {
    token: signedIn.body.session,
    body: { scope_type: 'treasury' },
  });
  assert.equal(minted.status, 201, JSON.stringify(minted.body));
  return { session: signedIn.body.session, agentId: signedIn.body.agent_id, pat: minted.body.pat };
}

/**
 * Signing in: SIWE with the browser's EIP-1193 wallet (window.ethereum) — a server nonce, a message naming
 * this page's host and origin (as POST /v1/identity/init requires), `personal_sign`, then the session grant —
 * and the CLI handoff: the single-use agent PAT of `xx dashboard`, exchanged for a session at once
 * (POST /v1/identity/exchange-pat). Sign-out ends the session on the server (POST /v1/auth/logout).
 *
 * Defends: a session left live on the server once this page no longer holds it. A sign-in (or a handoff) that
 * replaces a session ends the one it replaces as sign-out does — the Treasury PATs minted for it revoked
 * (./wallet-access.ts), then logged out — only once the new one is granted, so a refused or cancelled sign-in
 * leaves the current session as it was. Does not defend: an old session whose logout fails (best effort there:
 * the new session is kept and the old one lasts until it expires); a tab closed or reloaded while signed in.
 */
import { getAddress, toHex } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import type { IdentityNonce, SessionGrant } from '../../../src/shared/api-responses/identity-responses';
import { api, bearer, reply } from './client';
import { getSession, setSession, type Session } from './session';
import { forgetServicePat } from './seller-access';
import { revokeMinted } from './wallet-access';

interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] }): Promise<unknown>;
}

export function browserWallet(): Eip1193Provider | undefined {
  return (window as unknown as { ethereum?: Eip1193Provider }).ethereum;
}

export async function signInWithWallet(): Promise<void> {
  const provider = browserWallet();
  if (!provider) throw new Error('No browser wallet found (an EIP-1193 provider such as MetaMask or Rabby).');
  const accounts = (await provider.request({ method: 'eth_requestAccounts' })) as string[];
  if (!accounts[0]) throw new Error('The wallet shared no account.');
  const address = getAddress(accounts[0]);
  const chainId = Number(await provider.request({ method: 'eth_chainId' }));
  const { nonce } = await reply<IdentityNonce>(api.POST('/v1/identity/nonce'));
  const message = createSiweMessage({
    domain: location.host,
    address,
    statement: 'Sign in to the Treasury dashboard.',
    uri: location.origin,
    version: '1',
    chainId,
    nonce,
    issuedAt: new Date(),
  });
  const signature = (await provider.request({ method: 'personal_sign', params: [toHex(message), address] })) as string;
  const grant = await reply<SessionGrant>(
    api.POST('/v1/identity/init', { body: { message, signature, chain: 'evm' } }),
  );
  await replaceSession({
    token: grant.session,
    origin: 'sign_in',
    accountId: grant.account_id,
    agentId: grant.agent_id,
    expiresAt: grant.expires_at,
    address,
  });
}

export async function exchangeHandoffPat(pat: string): Promise<void> {
  const grant = await reply<SessionGrant>(api.POST('/v1/identity/exchange-pat', { headers: bearer(pat) }));
  await replaceSession({
    token: grant.session,
    origin: 'pat_exchange',
    accountId: grant.account_id,
    agentId: grant.agent_id,
    expiresAt: grant.expires_at,
  });
}

export async function signOut(): Promise<void> {
  const session = getSession();
  if (!session) return;
  try {
    await endSession(session);
  } finally {
    forgetServicePat();
    setSession(null);
  }
}

/** Ends `session` on the server: revokes the Treasury PATs minted for it, then logs it out with its own bearer. */
async function endSession(session: Session): Promise<void> {
  await revokeMinted(session);
  await reply(api.POST('/v1/auth/logout', { headers: bearer(session.token) }));
}

/** Holds `next`, ending the session it replaces first (best effort: a failed logout does not keep `next` out). */
async function replaceSession(next: Session): Promise<void> {
  const previous = getSession();
  if (previous) await endSession(previous).catch(() => undefined);
  setSession(next);
}

/**
 * Which bearer the Sellers pages use: the owner's sign-in session, or a seller's service PAT typed into the page
 * by its operator — held in this module's memory only, like the session, and forgotten at sign-out or reload.
 * A session handed over by the CLI (`xx dashboard`: exchanged from a single-use agent PAT) is neither: it acts as
 * that agent, and a credential never outranks what made it, so the API refuses it the account's sellers and
 * their ledger (403 `fresh_sign_in_required`) as it refuses the agent PAT. The pages then ask for the owner's
 * sign-in (`ownerNeeded`) instead of sending it and showing the refusal.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Whoami } from '../../../src/shared/api-responses/identity-responses';
import { api, bearer, reply } from './client';
import { getSession, useSession, type Session } from './session';

let servicePat: { token: string; sellerId: string } | null = null;
const listeners = new Set<() => void>();

export async function openWithServicePat(token: string): Promise<string> {
  const who = await reply<Whoami>(api.GET('/v1/auth/whoami', { headers: bearer(token) }));
  if (who.scope_type !== 'service' || !who.scope_id) throw new Error('That token is not a seller service PAT.');
  servicePat = { token, sellerId: who.scope_id };
  for (const l of listeners) l();
  return who.scope_id;
}

export function forgetServicePat(): void {
  servicePat = null;
  for (const l of listeners) l();
}

/** The session's token when it may read the account's sellers: the owner's sign-in only. */
function ownerToken(session: Session | null): string | null {
  return session?.origin === 'sign_in' ? session.token : null;
}

/** The bearer for seller routes, or null when neither an owner's sign-in nor a service PAT is held. */
export function sellerToken(): string | null {
  return servicePat?.token ?? ownerToken(getSession());
}

export function serviceSellerId(): string | null {
  return servicePat?.sellerId ?? null;
}

/**
 * The bearer and the seller a service PAT opened, re-read when either the service PAT or the session changes;
 * `ownerNeeded` when only a session handed over by the CLI is held, which may not read sellers.
 */
export function useSellerAccess(): { token: string | null; sellerId: string | null; ownerNeeded: boolean } {
  const session = useSession();
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  const token = servicePat?.token ?? ownerToken(session);
  return { token, sellerId: serviceSellerId(), ownerNeeded: token === null && session?.origin === 'pat_exchange' };
}

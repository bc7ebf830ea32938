/**
 * Which bearer the Sellers pages use: the session (an owner's, or one handed over by the CLI: both may read
 * the account's sellers and their ledger), or a seller's service PAT typed into the page by its operator —
 * held in this module's memory only, like the session, and forgotten at sign-out or reload.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Whoami } from '../../../src/shared/api-responses/identity-responses';
import { api, bearer, reply } from './client';
import { getSession } from './session';

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

/** The bearer for seller routes, or null when neither a session nor a service PAT is held. */
export function sellerToken(): string | null {
  return servicePat?.token ?? getSession()?.token ?? null;
}

export function serviceSellerId(): string | null {
  return servicePat?.sellerId ?? null;
}

export function useSellerAccess(): { token: string | null; sellerId: string | null } {
  const [, bump] = useState(0);
  useEffect(() => {
    const l = () => bump((n) => n + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return { token: sellerToken(), sellerId: serviceSellerId() };
}

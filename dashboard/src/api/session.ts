/**
 * The dashboard's session, held in this module's memory only: never in localStorage, sessionStorage, a
 * cookie or the URL, so a script of another page (or an extension reading storage) finds nothing, and a
 * reload or a closed tab forgets it (the person signs in again, or runs `xx dashboard` again). Sign-out ends
 * it on the server first (POST /v1/auth/logout). Treasury PATs minted for an owner's wallet pages
 * (./wallet-access.ts) are kept here too and revoked at sign-out.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Session {
  token: string;
  /** `sign_in`: the owner (SIWE); `pat_exchange`: a session exchanged from an agent PAT (acts as that agent). */
  origin: 'sign_in' | 'pat_exchange';
  accountId: string;
  agentId: string;
  expiresAt: string;
  /** The owner's address, for a sign-in. */
  address?: string;
}

let current: Session | null = null;
const listeners = new Set<(s: Session | null) => void>();

export function getSession(): Session | null {
  return current;
}

export function setSession(next: Session | null): void {
  current = next;
  for (const listener of listeners) listener(current);
}

export function useSession(): Session | null {
  const [session, set] = useState(current);
  useEffect(() => {
    listeners.add(set);
    set(current);
    return () => void listeners.delete(set);
  }, []);
  return session;
}

/**
 * Which bearer a wallet page uses. The wallet routes take a Treasury PAT or an agent's (exchanged) session;
 * an owner's sign-in session takes neither, so for an owner the dashboard mints a short-lived Treasury PAT
 * for the wallet's Treasury account (POST /v1/pats, 15 minutes, labelled "dashboard"), keeps it in memory
 * with the session and revokes it at sign-out. A session exchanged from an agent PAT reads, pays and dry-runs
 * as that agent, but cannot change a policy, rotate, revoke or make a Treasury PAT (the API refuses; the
 * pages say to sign in with a wallet).
 */
import type { CreatedPat } from '../../../src/shared/api-responses/pat-responses';
import { api, reply } from './client';
import { getSession } from './session';

interface Minted {
  id: string;
  pat: string;
  expiresAt: number;
}

const minted = new Map<string, Minted>();

export function canManageWallets(): boolean {
  return getSession()?.origin === 'sign_in';
}

/** The bearer for wallet routes of the Treasury account `accountId`. */
export async function walletToken(accountId: string): Promise<string> {
  const session = getSession();
  if (!session) throw new Error('not signed in');
  if (session.origin === 'pat_exchange') return session.token;
  const held = minted.get(accountId);
  if (held && held.expiresAt - Date.now() > 60_000) return held.pat;
  const created = await reply<CreatedPat>(
    api.POST('/v1/pats', {
      body: { scope_type: 'treasury', scope_id: accountId, label: 'dashboard', expires_in_seconds: 900 },
    }),
  );
  minted.set(accountId, { id: created.id, pat: created.pat, expiresAt: Date.parse(created.expires_at ?? '') || 0 });
  return created.pat;
}

/** Revokes every Treasury PAT minted for this session (best effort); called before logout. */
export async function revokeMinted(): Promise<void> {
  const all = [...minted.values()];
  minted.clear();
  await Promise.allSettled(all.map((m) => api.DELETE('/v1/pats/{id}', { params: { path: { id: m.id } } })));
}

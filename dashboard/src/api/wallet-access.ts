/**
 * Which bearer a wallet page uses. The wallet routes take a Treasury PAT or an agent's (exchanged) session;
 * an owner's sign-in session takes neither, so for an owner the dashboard mints a short-lived Treasury PAT
 * for the wallet's Treasury account (POST /v1/pats within the session, 15 minutes, labelled "dashboard"), keeps it
 * in memory with the session and revokes it at sign-out; the API ends it with the session in any case. A session exchanged from an agent PAT reads, pays and dry-runs
 * as that agent, but cannot change a policy, rotate, revoke or make a Treasury PAT (the API refuses; the
 * pages say to sign in with a wallet).
 *
 * Defends: a "dashboard" PAT left live after the session that minted it ends. One mint per account is shared by
 * every caller that asks while it is in flight (the overview asks once per wallet row, all at once); a PAT
 * renewed near its expiry revokes the one it replaces; revokeMinted (sign-out, or a sign-in replacing the
 * session) waits for the mints in flight and revokes them with the session's bearer before it is logged out,
 * and a mint that lands after its session was retired or replaced is revoked at once and never handed out.
 * A tab closed or reloaded while signed in runs none of this; its PATs were minted `within_session`, so the API
 * ends them with the session (`xx logout --all` ending every session, or its expiry) and never later. Does not
 * defend: a session that stays live (its PATs live up to their 15 minutes beside it).
 */
import type { CreatedPat } from '../../../src/shared/api-responses/pat-responses';
import { api, bearer, reply } from './client';
import { getSession, type Session } from './session';

interface Minted {
  id: string;
  pat: string;
  expiresAt: number;
}

/** A held PAT closer than this to its expiry is renewed. */
const RENEW_BEFORE_MS = 60_000;

/** Per Treasury account: the PAT held for the session, or the one mint in flight its callers share. */
const minted = new Map<string, Promise<Minted>>();
/** Sessions whose PATs were revoked (signing out, or replaced by a sign-in): they mint no more. */
const retired = new WeakSet<Session>();

export function canManageWallets(): boolean {
  return getSession()?.origin === 'sign_in';
}

/** The bearer for wallet routes of the Treasury account `accountId`. */
export async function walletToken(accountId: string): Promise<string> {
  for (;;) {
    const session = getSession();
    if (!session || retired.has(session)) throw new Error('not signed in');
    if (session.origin === 'pat_exchange') return session.token;
    const held = minted.get(accountId);
    if (!held) return (await mint(accountId, session)).pat;
    const current = await held;
    // Renewed or revoked while this caller waited: look again (only the first to find it stale renews it).
    if (minted.get(accountId) !== held) continue;
    if (current.expiresAt - Date.now() > RENEW_BEFORE_MS) return current.pat;
    return (await mint(accountId, session, current)).pat;
  }
}

/**
 * Mints a PAT for `accountId` with `session`'s bearer and holds the mint at once (before it lands), so callers
 * meanwhile share it; `superseded`, the PAT it renews, is revoked once the mint is answered. A mint that fails
 * is dropped, so the next caller tries again.
 */
function mint(accountId: string, session: Session, superseded?: Minted): Promise<Minted> {
  const minting = (async (): Promise<Minted> => {
    try {
      const created = await reply<CreatedPat>(
        api.POST('/v1/pats', {
          headers: bearer(session.token),
          body: {
            scope_type: 'treasury',
            scope_id: accountId,
            label: 'dashboard',
            expires_in_seconds: 900,
            within_session: true,
          },
        }),
      );
      if (retired.has(session) || getSession() !== session) {
        await revoke(session, created.id);
        throw new Error('not signed in');
      }
      return { id: created.id, pat: created.pat, expiresAt: Date.parse(created.expires_at ?? '') || 0 };
    } finally {
      if (superseded) await revoke(session, superseded.id);
    }
  })();
  minted.set(accountId, minting);
  minting.catch(() => {
    if (minted.get(accountId) === minting) minted.delete(accountId);
  });
  return minting;
}

/** Revokes one PAT with `session`'s bearer; best effort (an answer outside 2xx is not retried). */
async function revoke(session: Session, id: string): Promise<void> {
  await api
    .DELETE('/v1/pats/{id}', { params: { path: { id } }, headers: bearer(session.token) })
    .catch(() => undefined);
}

/**
 * Revokes every Treasury PAT minted for `session` (best effort), those still being minted included, which it
 * waits for; `session` mints none after. Called before `session` is logged out, while its bearer still works.
 */
export async function revokeMinted(session: Session): Promise<void> {
  retired.add(session);
  const all = [...minted.values()];
  minted.clear();
  // A mint in flight revokes itself when it lands (the session is retired) and rejects; a landed one is revoked here.
  await Promise.allSettled(all.map(async (held) => revoke(session, (await held).id)));
}

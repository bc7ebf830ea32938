/**
 * An in-memory fake of the identity store (src/api/identity/store/identity-store.ts), for unit tests of
 * sign-in and sessions without PostgreSQL: nonces, identities and credentials (the PATs a test puts there
 * and the sessions the service writes) kept in maps. A unit of work is only a token: nothing is rolled back,
 * and locks are not taken. A credential is live unless revoked or expired (its ancestors are not read).
 * Never imported by production code.
 */
import type { ParentCredential } from '../../src/api/auth/credential-lineage.js';
import type { StoreUnit } from '../../src/api/db/store-unit.js';
import { AppError } from '../../src/api/errors/app-error.js';
import type { IdentityKey, IdentityStore, NewSession } from '../../src/api/identity/store/identity-store.js';

/** A credential row: a PAT the test puts there, or a session the service wrote. */
export interface FakeCredential {
  id: string;
  kind: 'pat' | 'session';
  scopeType: ParentCredential['scopeType'];
  scopeId: string;
  accountId: string | null;
  parentId: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const UNIT = Symbol('fake unit') as unknown as StoreUnit;
const keyOf = (k: IdentityKey) => `${k.chain}:${k.address}`;

export class FakeIdentityStore implements IdentityStore {
  readonly nonces = new Map<string, { expiresAt: Date; usedAt: Date | null }>();
  readonly identities = new Map<string, IdentityKey & { account_id: string; linked_at: Date | null }>();
  readonly accounts = new Set<string>();
  readonly agents = new Map<string, { id: string; account_id: string }>();
  readonly credentials = new Map<string, FakeCredential>();

  inUnit<T>(work: (unit: StoreUnit) => Promise<T>): Promise<T> {
    return work(UNIT);
  }

  async insertNonce(nonce: string, expiresAt: Date) {
    this.nonces.set(nonce, { expiresAt, usedAt: null });
  }

  async purgeDeadNonces(now: Date, limit: number) {
    const dead = [...this.nonces].filter(([, n]) => n.usedAt !== null || n.expiresAt <= now).slice(0, limit);
    for (const [nonce] of dead) this.nonces.delete(nonce);
    return dead.length;
  }

  async consumeNonce(_unit: StoreUnit, nonce: string, now: Date) {
    const n = this.nonces.get(nonce);
    if (!n || n.usedAt !== null || n.expiresAt <= now) return false;
    n.usedAt = now;
    return true;
  }

  async lockIdentities() {}

  async findIdentities(_unit: StoreUnit, keys: readonly IdentityKey[]) {
    return keys.flatMap((k) => {
      const found = this.identities.get(keyOf(k));
      return found ? [{ chain: found.chain, address: found.address, account_id: found.account_id }] : [];
    });
  }

  async createAccount(_unit: StoreUnit, accountId: string) {
    this.accounts.add(accountId);
  }

  async touchIdentity() {}

  async linkIdentity(_unit: StoreUnit, key: IdentityKey, accountId: string, at: { linkedAt: Date | null }) {
    if (this.identities.has(keyOf(key))) return false;
    this.identities.set(keyOf(key), { ...key, account_id: accountId, linked_at: at.linkedAt });
    return true;
  }

  async insertSession(_unit: StoreUnit, s: NewSession) {
    this.credentials.set(s.id, {
      id: s.id,
      kind: 'session',
      scopeType: s.scopeType,
      scopeId: s.scopeId,
      accountId: s.accountId,
      parentId: s.parentId,
      createdAt: s.createdAt,
      expiresAt: s.expiresAt,
      revokedAt: null,
    });
  }

  async agent(agentId: string) {
    return this.agents.get(agentId);
  }

  async lockCredential(_unit: StoreUnit, tokenId: string) {
    return this.credentials.has(tokenId);
  }

  async parentOf(_unit: StoreUnit, tokenId: string, now: Date): Promise<ParentCredential> {
    const c = this.credentials.get(tokenId);
    if (!c || c.revokedAt !== null || (c.expiresAt !== null && c.expiresAt <= now)) throw new AppError('invalid_token');
    return {
      id: c.id,
      scopeType: c.scopeType,
      scopeId: c.scopeId,
      gate: false,
      expiresAt: c.expiresAt,
      dailyCapMicro: null,
      depth: 1,
    };
  }

  private liveSessions(where: (c: FakeCredential) => boolean, now: Date) {
    return [...this.credentials.values()].filter(
      (c) => c.kind === 'session' && c.revokedAt === null && (c.expiresAt === null || c.expiresAt > now) && where(c),
    );
  }

  async liveSessionsBeyond(_unit: StoreUnit, patId: string, now: Date, keep: number) {
    const newestFirst = this.liveSessions((c) => c.parentId === patId, now).sort(
      (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1),
    );
    return newestFirst.slice(keep).map((c) => c.id);
  }

  async unrevokedSessionsOf(_unit: StoreUnit, accountId: string) {
    return [...this.credentials.values()]
      .filter((c) => c.kind === 'session' && c.accountId === accountId && c.revokedAt === null)
      .map((c) => c.id);
  }

  async endSession(_unit: StoreUnit, sessionId: string, now: Date) {
    const c = this.credentials.get(sessionId);
    if (!c || c.kind !== 'session') return undefined;
    c.revokedAt = c.revokedAt ?? now;
    return { id: c.id, revoked_at: c.revokedAt };
  }

  async revokeTree(_unit: StoreUnit, rootIds: readonly string[], at: Date) {
    const ended: string[] = [];
    let level = [...rootIds];
    while (level.length > 0) {
      for (const id of level) {
        const c = this.credentials.get(id);
        if (!c) continue;
        c.revokedAt = c.revokedAt ?? at;
        ended.push(id);
      }
      level = [...this.credentials.values()]
        .filter((c) => c.parentId !== null && level.includes(c.parentId))
        .map((c) => c.id);
    }
    return ended;
  }
}

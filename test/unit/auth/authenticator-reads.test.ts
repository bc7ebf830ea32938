/**
 * How often the authenticator reads a bearer's chain (src/api/auth/authenticator.ts): requests arriving while a
 * token's chain is being read share that read, so a busy token costs one read per cache time instead of one per
 * request arriving meanwhile; a revocation made through this process (`forget`) is never answered from a read begun
 * before it, for later requests or from the cache.
 */
import assert from 'node:assert/strict';
import { Authenticator } from '../../../src/api/auth/authenticator.js';
import type { ChainRow } from '../../../src/api/auth/credential-chain.js';
import type { CredentialStore } from '../../../src/api/auth/credential-store.js';
import { TOKEN_PREFIXES } from '../../../src/api/auth/token-codec.js';

const row = (revoked: boolean): ChainRow => ({
  id: 'tok_1',
  kind: 'pat',
  scope_type: 'treasury',
  scope_id: 'acct_1',
  gate: false,
  single_use: false,
  expires_at: null,
  used_at: null,
  revoked_at: revoked ? new Date(0) : null,
  account_id: null,
  daily_cap_micro: null,
  session_origin: null,
  parent_token_id: null,
  depth: 0,
});

/** A store whose reads wait until `release` is called. */
function slowStore() {
  const state = { reads: 0, revoked: false, waiting: [] as Array<() => void> };
  const store: CredentialStore = {
    chainByHash: () => {
      state.reads++;
      // The row as it was when the read began (a read's snapshot), answered when `release` lets it.
      const revoked = state.revoked;
      return new Promise((resolve) => state.waiting.push(() => resolve([row(revoked)])));
    },
    consumeSingleUse: () => Promise.resolve(true),
  };
  const release = () => state.waiting.splice(0).forEach((go) => go());
  return { store, state, release };
}

const bearer = `Bearer ${TOKEN_PREFIXES.pat}${'a'.repeat(40)}`;
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? 'error',
  );

describe("the authenticator's reads of a bearer's chain", () => {
  it('requests arriving during a read share it: 50 at once cost one read, then the cache answers', async () => {
    const { store, state, release } = slowStore();
    const auth = new Authenticator(store, undefined, 60_000);
    const all = Array.from({ length: 50 }, () => outcome(auth.authenticate(bearer)));
    await new Promise((r) => setImmediate(r));
    release();
    assert.deepEqual([...new Set(await Promise.all(all))], ['ok']);
    assert.equal(state.reads, 1);
    assert.equal(await outcome(auth.authenticate(bearer)), 'ok');
    assert.equal(state.reads, 1, 'answered from the cache');
  });

  it('a read begun before a revocation through this process answers no request after it, nor fills the cache', async () => {
    const { store, state, release } = slowStore();
    const auth = new Authenticator(store, undefined, 60_000);
    const before = outcome(auth.authenticate(bearer));
    await new Promise((r) => setImmediate(r));
    state.revoked = true;
    auth.forget('tok_1');
    const after = outcome(auth.authenticate(bearer));
    await new Promise((r) => setImmediate(r));
    assert.equal(state.reads, 2, 'the request after the revocation reads again');
    // The first read saw the row before the revocation: it answers the request that began before it.
    state.waiting.shift()!();
    assert.equal(await before, 'ok');
    release();
    assert.equal(await after, 'invalid_token');
    const later = outcome(auth.authenticate(bearer));
    await new Promise((r) => setImmediate(r));
    assert.equal(state.reads, 3, 'the stale read was not cached');
    release();
    assert.equal(await later, 'invalid_token');
  });

  it('with the cache off, every request reads', async () => {
    const { store, state, release } = slowStore();
    const auth = new Authenticator(store, undefined, 0);
    const all = Array.from({ length: 5 }, () => outcome(auth.authenticate(bearer)));
    await new Promise((r) => setImmediate(r));
    release();
    await Promise.all(all);
    assert.equal(state.reads, 5);
  });

  it('a token in use stays cached while 10,000 others come and go: the least recently used go first', async () => {
    const reads = new Map<string, number>();
    const store: CredentialStore = {
      chainByHash: (hash) => {
        reads.set(hash, (reads.get(hash) ?? 0) + 1);
        return Promise.resolve([{ ...row(false), id: `tok_${hash.slice(0, 12)}` }]);
      },
      consumeSingleUse: () => Promise.resolve(true),
    };
    const auth = new Authenticator(store, undefined, 60_000);
    const token = (i: number) => `Bearer ${TOKEN_PREFIXES.pat}${i.toString(16).padStart(40, '0')}`;
    const busy = `Bearer ${TOKEN_PREFIXES.pat}${'b'.repeat(40)}`;
    await auth.authenticate(busy);
    for (let i = 0; i < 12_000; i++) {
      await auth.authenticate(token(i));
      if (i % 1_000 === 0) await auth.authenticate(busy);
    }
    assert.equal(Math.max(...reads.values()), 1, 'every token read once: the busy one never left the cache');
    assert.equal(reads.size, 12_001);
  });
});

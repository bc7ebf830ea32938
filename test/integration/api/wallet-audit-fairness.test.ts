/**
 * GET /v1/wallets/{id}/audit through HTTP (real PostgreSQL): verifications from a chain's first row run one at
 * a time per process, served round-robin per tenant (base/fair-queue.ts), so one account asking for
 * all its wallets' audits at once does not make another account's first request wait for all of them.
 * Deterministic, not timed: the worker is held on a third account's verification (the store's verifyChain
 * waits on a gate for that wallet) while account A's five requests and then account B's one are queued —
 * each seen read its newest events, the last step before it queues — and the passes are then counted in the
 * order they start.
 */
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { useTestTreasury } from '../../support/api-harness.js';
import { signInWithNewKey } from '../../support/sign-in.js';
import { PgWalletHistoryStore } from '../../../src/api/wallets/store/pg-wallet-history-store.js';

describe('wallet audit: full verifications are shared fairly between accounts (HTTP, PostgreSQL)', function () {
  this.timeout(180_000);
  const t = useTestTreasury();

  /** Wallets whose newest audit events were read (each request's last step before its verification queues). */
  const eventsRead = new Set<string>();
  const onResponse = (_response: unknown, query: { sql?: string; bindings?: readonly unknown[] }) => {
    if (query.sql?.includes('"event_type"') && query.sql.includes('order by "seq" desc'))
      eventsRead.add(String(query.bindings?.[0]));
  };
  /** The wallets of each verification from a chain's first row, in the order they started. */
  const fullPasses: string[] = [];
  let held: string | undefined;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const original = PgWalletHistoryStore.prototype.verifyChain;

  before(() => {
    t.db.knex.on('query-response', onResponse);
    PgWalletHistoryStore.prototype.verifyChain = async function (walletId, since) {
      if (!since) fullPasses.push(walletId);
      if (walletId === held) await gate;
      return original.call(this, walletId, since);
    };
  });
  after(() => {
    release();
    PgWalletHistoryStore.prototype.verifyChain = original;
    t.db.knex.off('query-response', onResponse);
  });

  /** A fresh account's Treasury PAT and `count` wallets of it. */
  async function account(count: number): Promise<{ pat: string; wallets: string[] }> {
    const { session } = await signInWithNewKey(t);
    const minted = await t.request('POST', '/v1/pats', { token: session, body: { scope_type: 'treasury' } });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const pat = minted.body.pat as string;
    const wallets: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await t.request('POST', '/v1/wallets', { token: pat, body: { label: `w${i}` } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      wallets.push(res.body.id as string);
    }
    return { pat, wallets };
  }

  const audit = (pat: string, walletId: string) =>
    t.request('GET', `/v1/wallets/${walletId}/audit?limit=1`, { token: pat });

  /** Waits (by event-loop turns, at most 30 s) until `done` holds. */
  async function until(done: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (!done()) {
      assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
      await tick();
    }
    // The request's continuation after its read queues it within the same turn; one more turn to be sure.
    await tick();
  }

  it("account B's first request is verified after at most one of account A's five queued ones, not after all of them", async () => {
    const holder = await account(1);
    const a = await account(5);
    const b = await account(1);
    held = holder.wallets[0]!;

    const holding = audit(holder.pat, held);
    await until(() => fullPasses.includes(held!), "the holder's verification to start");
    const aAnswers = a.wallets.map((w) => audit(a.pat, w));
    await until(() => a.wallets.every((w) => eventsRead.has(w)), "A's five requests to queue");
    const bAnswer = audit(b.pat, b.wallets[0]!);
    await until(() => eventsRead.has(b.wallets[0]!), "B's request to queue");
    assert.deepEqual(fullPasses, [held], 'the worker is held: nothing else started');

    release();
    const answers = await Promise.all([holding, bAnswer, ...aAnswers]);
    for (const res of answers) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.verification.state, 'verified', JSON.stringify(res.body.verification));
    }
    const bAt = fullPasses.indexOf(b.wallets[0]!);
    const aAfterB = fullPasses.slice(bAt + 1).filter((w) => a.wallets.includes(w));
    assert.equal(fullPasses.length, 7, JSON.stringify(fullPasses));
    assert.ok(bAt >= 1 && bAt <= 2, `B's verification was pass ${bAt} of ${JSON.stringify(fullPasses)}`);
    assert.ok(aAfterB.length >= 4, "A's queue had not drained when B was served");
  });
});

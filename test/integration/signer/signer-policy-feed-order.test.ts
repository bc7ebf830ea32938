/**
 * The feed of accepted policies that keeps a signer process's wallets "known open" (docs/adr/0012, "Wallets without a
 * signed policy: recorded after release"; signer/owner-policy/open-spend-leases.ts) follows the order in which the
 * policies commit, through two real signer processes sharing one store.
 *
 * Defends: a wallet's first policy missed by another process — its transaction numbered its history row before a
 * second policy that committed first, and the other process read the feed past that number in between. The other
 * process then kept the wallet known open and signed its payments unchecked (recorded after release), including ones
 * the owner's policy refuses, until its next write of the queue. Now every history row is numbered under the store
 * generation's lock, which its transaction holds until it commits: a number the feed passed was committed.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { PAYEE, outcome, signedPolicy } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

/** Longer than the default: the second process reads the feed every third of it, even on a loaded machine. */
const LEASE_MS = 3000;
const CENT = '10000';
/** The only payee the owner's policy allows (PAYEE, the other, it refuses). */
const ALLOWED = '0x1234567890123456789012345678901234567890';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the feed of policy changes follows commit order (two signer processes, one store)', function () {
  this.timeout(180_000);
  const { owner, firstClient, store, db, account } = useTwoSignersOnOneStore({
    prefix: 'treasury-policy-feed',
    env: { TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: String(LEASE_MS) },
  });

  /** Sessions of the store waiting on a lock of the store's generation row. */
  const generationWaiters = async () =>
    (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%signer_store_generation%'`,
      )
    ).rows[0]!.n;

  it("a wallet's first policy committed after a later-numbered one still reaches the other process", async () => {
    const { ops, wallet } = await account();
    const other = await account();
    // Known open to the second process: its statement recorded this payment and saw the row without a policy.
    assert.equal(await outcome(ops[1]!.sign(wallet, CENT)), 'signed');

    const holder = new pg.Client({ connectionString: store.connectionString });
    await holder.connect();
    let setting: Promise<unknown> | undefined;
    try {
      // The store's generation held: every trust-binding write waits for it.
      await holder.query('BEGIN');
      await holder.query('SELECT generation FROM signer_store_generation FOR UPDATE');
      const document = await signedPolicy(owner, wallet.address, { counterparty_allowlist: [ALLOWED] });
      setting = firstClient.call('set_wallet_policy', document);
      setting.catch(() => undefined);
      for (let waited = 0; (await generationWaiters()) < 1; waited += 20) {
        assert.ok(waited < 30_000, "the first process's set_wallet_policy waits on the generation");
        await sleep(20);
      }
      // Another wallet's policy commits meanwhile, as one that reached the generation first would: its history row
      // is numbered now (autocommit).
      await db.query(
        `INSERT INTO signer_policy_history
                (address, policy, version, policy_hash, issued_at, signature, authority_kind, authority_address)
         VALUES ($1, '{}', 1, $2, 0, $3, 'owner', $4)`,
        [
          other.wallet.address.toLowerCase(),
          `0x${'0'.repeat(64)}`,
          `0x${'1'.repeat(130)}`,
          owner.address.toLowerCase(),
        ],
      );
      // The second process reads the feed (every third of a lease) past that row while the first still waits.
      await sleep(LEASE_MS);
      await holder.query('COMMIT');
      await setting;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await setting?.catch(() => undefined);
    }

    assert.equal(
      await outcome(ops[1]!.sign(wallet, CENT, PAYEE)),
      'policy_denied',
      'the second process decides the wallet under its new policy',
    );
    assert.equal(await outcome(ops[1]!.sign(wallet, CENT, ALLOWED)), 'signed');
    const { rows } = await db.query<{ address: string }>('SELECT address FROM signer_policy_history ORDER BY seq');
    assert.deepEqual(
      rows.map((r) => r.address),
      [other.wallet.address.toLowerCase(), wallet.address.toLowerCase()],
      'the policy that committed last is numbered last',
    );
  });
});

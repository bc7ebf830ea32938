/**
 * Spends of wallets without a signed policy, recorded after their signature leaves (docs/adr/0012, "Wallets
 * without a signed policy: recorded after release"), through two real signer processes sharing one store, as a
 * compromised API could drive them:
 *  - a policy signed through the process that queued the spends counts every one of them at its first decision;
 *  - a policy signed through another process: once set_wallet_policy has answered, the process that held a
 *    lease on the wallet decides its next payment under the policy (its lease has run out), and the spends it
 *    released before count;
 *  - a wallet without a policy: every released spend reaches the store within a lease — from its first payment on,
 *    since the statement that made its row (at its creation) saw it without a policy;
 *  - at close (a shutdown; the store in this process), spends still queued while the store is out of reach: the last
 *    write is tried again, then the spends lost are logged as counts (`open_spends_lost`), never dropped silently.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PgOwnerPolicyStore } from '../../../signer/owner-policy/pg-owner-policy-store.js';
import { openDatabaseGate } from '../../support/database-outage.js';
import { createSignerDatabase, testPostgres } from '../../support/test-database.js';
import { DEVELOPMENT_PLACEMENT, outcome, PAYEE, signedPolicy } from './signer-test-helpers.js';
import { useTwoSignersOnOneStore } from './two-signers-one-store.js';

/** Longer than the default, so that a lease outlives a slow set_wallet_policy on a loaded machine. */
const LEASE_MS = 3000;
const env = { TREASURY_SIGNER_OPEN_SPEND_LEASE_MS: String(LEASE_MS) };
const usd = (dollars: number) => String(Math.round(dollars * 1_000_000));

describe('spends of wallets without a signed policy, recorded after release (two signer processes, one store)', function () {
  this.timeout(180_000);
  const { owner, firstClient, second, store, account, storedSum } = useTwoSignersOnOneStore({
    prefix: 'treasury-open-spends',
    env,
  });

  it('a policy signed through the same process counts the spends it had queued at its first decision', async () => {
    const { ops, wallet } = await account();
    // Released under the lease the wallet's creation gave, each recorded after release.
    await ops[0]!.sign(wallet, usd(0.3));
    await Promise.all([ops[0]!.sign(wallet, usd(0.3)), ops[0]!.sign(wallet, usd(0.3))]);
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, wallet.address, { daily_cap_usd: '1' }));
    assert.equal(await storedSum(wallet.address), 900_000n, 'the queued spends were written before the policy');
    assert.equal(await outcome(ops[0]!.sign(wallet, usd(0.2))), 'policy_denied');
    assert.equal(await outcome(ops[0]!.sign(wallet, usd(0.1))), 'signed');
  });

  it('a policy signed through another process: once it answered, the leaseholder decides under it', async () => {
    const { ops, wallet } = await account();
    const document = await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.7' });
    await ops[0]!.sign(wallet, usd(0.3));
    // Released under the first process's lease, which its write renews; the policy follows at once.
    await ops[0]!.sign(wallet, usd(0.3));
    await second.client.call('set_wallet_policy', document);
    assert.equal(
      await outcome(ops[0]!.sign(wallet, usd(0.5))),
      'policy_denied',
      'the first process no longer signs the wallet unchecked',
    );
    assert.equal(await outcome(ops[1]!.sign(wallet, usd(0.2))), 'policy_denied', 'both earlier spends count');
    assert.equal(await outcome(ops[1]!.sign(wallet, usd(0.1))), 'signed');
  });

  it("a new wallet's first payment is released before its spend is written: the store's row, made without a policy, gave the lease", async () => {
    const { ops, wallet } = await account();
    // Nothing can be written to the spends while this lock is held: a payment recorded before release would wait.
    const holder = new pg.Client({ connectionString: store.connectionString });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE signer_spends IN EXCLUSIVE MODE');
      const first = await Promise.race([
        outcome(ops[0]!.sign(wallet, usd(0.25))),
        new Promise((r) => setTimeout(() => r('waited on the store'), LEASE_MS / 2)),
      ]);
      assert.equal(first, 'signed');
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    for (let waited = 0; (await storedSum(wallet.address)) < 250_000n; waited += 20) {
      assert.ok(waited < LEASE_MS, 'written within a lease');
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('a wallet without a policy: every released spend is in the store within a lease', async () => {
    const { ops, wallet } = await account();
    const signed = await Promise.all(Array.from({ length: 60 }, (_, i) => outcome(ops[i % 2]!.sign(wallet, '10000'))));
    assert.deepEqual([...new Set(signed)], ['signed']);
    for (let waited = 0; (await storedSum(wallet.address)) < 600_000n; waited += 20) {
      assert.ok(waited < LEASE_MS, 'written within a lease');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(await storedSum(wallet.address), 600_000n);
  });
});

describe('spends recorded after release, at close with the store out of reach (the store in this process)', function () {
  this.timeout(120_000);

  it('tries the last write again, then logs the spends it could not write as counts (open_spends_lost)', async () => {
    const database = await createSignerDatabase();
    const name = new URL(database.connectionString).pathname.slice(1);
    const gate = await openDatabaseGate({ name, connectionString: (await testPostgres()).urlFor(name) });
    const logged: Array<{ fields: Record<string, unknown>; message: string }> = [];
    const log = {
      warn: () => undefined,
      error: (fields: Record<string, unknown>, message: string) => void logged.push({ fields, message }),
    };
    // The longest lease: each wallet's row, made without a policy, lets its spends be recorded after release.
    const store = new PgOwnerPolicyStore({
      connectionString: database.connectionString,
      poolMax: 2,
      openSpendLeaseMs: 10_000,
      lookBackSeconds: 60,
      log,
      placement: DEVELOPMENT_PLACEMENT,
    });
    let closed = false;
    try {
      await store.prepare();
      const wallets = [
        privateKeyToAccount(generatePrivateKey()).address,
        privateKeyToAccount(generatePrivateKey()).address,
      ];
      for (const address of wallets) await store.recordWallet(address, `account-${address}`, null);
      await gate.refuse();
      const spend = (address: string, amount: bigint) =>
        store.reserveSpend(
          { address, amount, payee: PAYEE, at: new Date() },
          () => assert.fail('a leased wallet is not decided'),
          () => assert.fail('a leased wallet is not decided'),
        );
      const reserved = [spend(wallets[0]!, 100_000n), spend(wallets[0]!, 200_000n), spend(wallets[1]!, 300_000n)];
      assert.deepEqual(
        (await Promise.all(reserved.map((r) => r.outcome))).map((o) => o.kind),
        ['recorded', 'recorded', 'recorded'],
        'recorded after release: queued',
      );
      // Closed at once (a shutdown): the queue's own timer has not written it, the store is out of reach.
      closed = true;
      await store.close();
      const lost = logged.filter((l) => l.fields.event === 'open_spends_lost');
      assert.equal(lost.length, 1, `one line for the spends lost: ${JSON.stringify(logged)}`);
      assert.deepEqual(
        { ...lost[0]!.fields, err: undefined },
        {
          event: 'open_spends_lost',
          spends: 3,
          wallets: 2,
          tries: 3,
          err: undefined,
        },
      );
      assert.match(String(lost[0]!.fields.err), /not currently accepting connections/);
      // What the line says is so: nothing was written.
      await gate.allow();
      const db = new pg.Client({ connectionString: database.connectionString });
      await db.connect();
      try {
        const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM signer_spends');
        assert.equal(rows[0]!.n, 0);
      } finally {
        await db.end();
      }
    } finally {
      if (!closed) await store.close().catch(() => undefined);
      await gate.close();
      await database.drop();
    }
  });
});

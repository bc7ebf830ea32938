/**
 * A signed wallet's spend state remembered between payments (signer/owner-policy/spend-state-cache.ts), through a
 * real signer process and its PostgreSQL store: after a wallet's first decision, the next ones are decided on the
 * state the last commit left (one round trip instead of two), and what is decided stays what the store would
 * decide — a cap still stops exactly, a velocity window that slid on is decided on the store again, and a state
 * another process moved is never committed on.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import { SignerClient } from '../../../signer/protocol/signer-client.js';
import { findFreePort, startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { outcome, ownerAuthority, readMetric, signedPolicy, walletOps } from './signer-test-helpers.js';

const CENT = '10000';
const STATES = 'treasury_signer_spend_states_total';

describe("a signed wallet's spend state remembered between payments", function () {
  this.timeout(180_000);
  let store: SignerDatabase;
  let first: TestSigner;
  let second: TestSigner;
  let firstClient: SignerClient;
  let firstMetrics: number;
  let dir: string;
  let db: pg.Client;
  const owner = privateKeyToAccount(generatePrivateKey());

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-spend-states-'));
    store = await createSignerDatabase();
    firstMetrics = await findFreePort();
    first = await startTestSigner({
      dir,
      policyStore: store,
      env: { TREASURY_SIGNER_METRICS_PORT: String(firstMetrics) },
    });
    const firstSocket = path.join(dir, 'first.sock');
    fs.renameSync(first.socketPath, firstSocket);
    firstClient = new SignerClient({ socketPath: firstSocket, timeoutMs: 30_000 });
    second = await startTestSigner({ dir, policyStore: store });
    db = new pg.Client({ connectionString: store.connectionString });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    firstClient?.close();
    await second?.stop();
    await first?.stop();
    await store?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function signedWallet(policy: WalletPolicyInput) {
    const made = await firstClient.call('create_account_key', { authority: await ownerAuthority(owner) });
    const ops = [
      walletOps({ client: firstClient } as TestSigner, made.account_key_ref),
      walletOps(second, made.account_key_ref),
    ];
    const wallet = await ops[0]!.wallet();
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, wallet.address, policy));
    return { ops, wallet };
  }

  const states = async () => ({
    remembered: await readMetric(firstMetrics, STATES, 'source="remembered"'),
    read: await readMetric(firstMetrics, STATES, 'source="read"'),
  });
  const storedCount = async (address: string) =>
    (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM signer_spends WHERE address = $1', [
        address.toLowerCase(),
      ])
    ).rows[0]!.n;

  it('payments one after another are decided on the remembered state after the first, and stop exactly at the cap', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.05' });
    const before = await states();
    const results: string[] = [];
    for (let i = 0; i < 7; i++) results.push(await outcome(ops[0]!.sign(wallet, CENT)));
    const after = await states();
    assert.deepEqual(results, ['signed', 'signed', 'signed', 'signed', 'signed', 'policy_denied', 'policy_denied']);
    assert.equal(await storedCount(wallet.address), 5);
    // The first payment reads; the next four are decided on what the last commit left; each refusal made on a
    // remembered state is made again on a read before it stands.
    assert.ok(after.remembered - before.remembered >= 4, `remembered ${after.remembered - before.remembered}`);
    assert.ok(after.read - before.read <= 3, `read ${after.read - before.read}`);
  });

  it('a refusal on a remembered state is made again on the store: a velocity window that slid on allows again', async () => {
    const { ops, wallet } = await signedWallet({ velocity_cap: { max_count: 2, window_seconds: 2 } });
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_denied');
    await new Promise((r) => setTimeout(r, 2_200));
    // The remembered state still counts two payments in the window; the store counts none.
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await storedCount(wallet.address), 3);
  });

  it('a state another process moved is not committed on: payments alternating between two processes stop at the cap', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '0.10' });
    const results: string[] = [];
    for (let i = 0; i < 14; i++) results.push(await outcome(ops[i % 2]!.sign(wallet, CENT)));
    assert.equal(results.filter((r) => r === 'signed').length, 10);
    assert.deepEqual(results.slice(10), ['policy_denied', 'policy_denied', 'policy_denied', 'policy_denied']);
    assert.equal(await storedCount(wallet.address), 10);
  });

  it('a new policy is not decided on the state remembered under the old one', async () => {
    const { ops, wallet } = await signedWallet({ daily_cap_usd: '1' });
    for (let i = 0; i < 3; i++) assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    // Signed through the other process: this one learns of it only from the store.
    await second.client.call(
      'set_wallet_policy',
      await signedPolicy(owner, wallet.address, { daily_cap_usd: '0.04' }, 2),
    );
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'signed');
    assert.equal(await outcome(ops[0]!.sign(wallet, CENT)), 'policy_denied');
    assert.equal(await storedCount(wallet.address), 4);
  });
});

/**
 * A signer's policy store restored from an older snapshot (an insider with backups, an operator's mistake), against
 * real signer processes each keeping its watermark file (signer/owner-policy/store-watermark.ts):
 *  - the owner signs v1, the store is copied, the owner signs v2, the copy is restored: the signer refuses to start
 *    (exit 1, naming both generations); with TREASURY_SIGNER_ACCEPT_STORE_GENERATION=<the store's> it starts, once,
 *    and holds v1 (what the store holds: the owner's v2 must be presented again); the same number does not accept a
 *    second restore of that copy;
 *  - a copy from before the account existed is refused at start, so no other key can bind the wallet as its first
 *    signer;
 *  - two processes sharing one store, each with its own file: both start and serve, and the one whose file fell
 *    behind (the other advanced the store) restarts.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createSignerDatabase } from '../../support/test-database.js';
import { ownerAuthority, signedPolicy, storeGeneration, storeSnapshots } from './signer-test-helpers.js';

const WATERMARK = 'TREASURY_SIGNER_STORE_WATERMARK_FILE';
const ACCEPT = 'TREASURY_SIGNER_ACCEPT_STORE_GENERATION';

const fileGeneration = (file: string) =>
  (JSON.parse(fs.readFileSync(file, 'utf8')) as { generation: number }).generation;

describe('a signer store restored from an older snapshot', function () {
  this.timeout(180_000);
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A store, its snapshots, and a folder (token, socket, watermark file) for signers started on it. */
  async function setup(folders = 1) {
    const store = await createSignerDatabase();
    const snapshots = storeSnapshots(store);
    const dirs = Array.from({ length: folders }, () => fs.mkdtempSync(path.join(os.tmpdir(), 'signer-rollback-')));
    cleanups.push(
      () => store.drop(),
      () => snapshots.drop(),
      () => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })),
    );
    const files = dirs.map((dir) => path.join(dir, 'store-watermark.json'));
    const start = (i = 0, env: Record<string, string> = {}) =>
      startTestSigner({ dir: dirs[i]!, policyStore: store, env: { [WATERMARK]: files[i]!, ...env } });
    return { store, snapshots, files, start };
  }

  /** The start's failure (the harness's message: exit code and the signer's stderr); fails if it started. */
  async function startRefused(start: Promise<TestSigner>): Promise<string> {
    const started = await start.catch((err: Error) => err.message);
    if (typeof started !== 'string') {
      await started.stop();
      assert.fail('the signer started on a store older than it has seen');
    }
    return started;
  }

  async function ownedWallet(signer: TestSigner, owner: ReturnType<typeof privateKeyToAccount>) {
    const account = await signer.client.call('create_account_key', { authority: await ownerAuthority(owner) });
    const wallet = await signer.client.createWalletKey({ account_key_ref: account.account_key_ref });
    return wallet.address;
  }

  it('refuses to start on a store restored to an older signed policy; one exact acknowledgement starts it, once', async () => {
    const { snapshots, files, start } = await setup();
    const owner = privateKeyToAccount(generatePrivateKey());
    let signer = await start();
    const wallet = await ownedWallet(signer, owner);
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, wallet, { per_tx_cap_usd: '50' }, 1));
    await signer.stop();
    const backup = await snapshots.take();

    signer = await start();
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, wallet, { per_tx_cap_usd: '1' }, 2));
    await signer.stop();

    await snapshots.restore(backup);
    const refused = await startRefused(start());
    assert.match(refused, /exited with 1 before ready/);
    // An account, a wallet, a policy: three trust-binding writes on a new store; then v2.
    assert.match(
      refused,
      /the policy store is older than this signer has seen: restored from a backup\? Its generation is 3, and TREASURY_SIGNER_STORE_WATERMARK_FILE \S+ holds 4/,
    );
    assert.match(refused, /set TREASURY_SIGNER_ACCEPT_STORE_GENERATION=3/);
    // Another number acknowledges nothing.
    assert.match(await startRefused(start(0, { [ACCEPT]: '2' })), /Its generation is 3/);

    signer = await start(0, { [ACCEPT]: '3' });
    assert.match(signer.logs(), /"event":"store_generation_accepted"/);
    assert.equal(fileGeneration(files[0]!), 3);
    // The store's v1 is held again (documented): the owner's v2 is presented again.
    assert.equal((await signer.client.call('get_wallet_policy', { address: wallet })).current?.version, 1);
    await signer.client.call('set_wallet_policy', await signedPolicy(owner, wallet, { per_tx_cap_usd: '1' }, 2));
    await signer.stop();

    // The same copy restored again: the acknowledgement was used.
    await snapshots.restore(backup);
    assert.match(await startRefused(start(0, { [ACCEPT]: '3' })), /was already used once/);
  });

  it('refuses to start on a store restored to before the account existed (no first signer can take the wallet)', async () => {
    const { snapshots, start } = await setup();
    const owner = privateKeyToAccount(generatePrivateKey());
    let signer = await start();
    await signer.stop();
    const empty = await snapshots.take();

    signer = await start();
    await ownedWallet(signer, owner);
    await signer.stop();

    await snapshots.restore(empty);
    const refused = await startRefused(start());
    assert.match(refused, /exited with 1 before ready/);
    assert.match(refused, /Its generation is 0, and TREASURY_SIGNER_STORE_WATERMARK_FILE \S+ holds 2/);
  });

  it('two processes on one store, each with its own file: both serve, and the one left behind restarts', async () => {
    const { store, files, start } = await setup(2);
    const owner = privateKeyToAccount(generatePrivateKey());
    let first = await start(0);
    const second = await start(1);
    cleanups.push(() => second.stop());
    const wallet = await ownedWallet(first, owner);
    await first.client.call('set_wallet_policy', await signedPolicy(owner, wallet, {}, 1));
    await second.client.call('set_wallet_policy', await signedPolicy(owner, wallet, {}, 2));
    assert.equal(await storeGeneration(store), 4);
    assert.deepEqual(files.map(fileGeneration), [3, 4]);
    assert.equal((await first.client.call('get_wallet_policy', { address: wallet })).current?.version, 2);

    await first.stop();
    first = await start(0);
    cleanups.push(() => first.stop());
    assert.equal(fileGeneration(files[0]!), 4);
    await first.client.call('set_wallet_policy', await signedPolicy(owner, wallet, {}, 3));
    assert.deepEqual(files.map(fileGeneration), [5, 4]);
    await second.client.call('set_wallet_policy', await signedPolicy(owner, wallet, {}, 4));
    assert.deepEqual(files.map(fileGeneration), [5, 6]);
  });
});

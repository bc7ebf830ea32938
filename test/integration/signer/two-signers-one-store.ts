/**
 * Two signer processes sharing one policy store and one SoftHSM token, started for the enclosing mocha suite: the
 * first reached through a socket path of its own (moved aside before the second binds the harness's), the second
 * through its harness client; a PostgreSQL client on the store for the suite's own reads and writes. `account`
 * makes an account owned by `owner` with one wallet, and operations on it through either process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { WalletPolicyInput } from '../../../policy/policy-schema.js';
import { SignerClient } from '../../../signer/protocol/signer-client.js';
import { lateBound } from '../../support/late-bound.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { ownerAuthority, signedPolicy, walletOps } from './signer-test-helpers.js';

export interface TwoSignersOptions {
  /** The temporary directory's prefix (the suite's name). */
  prefix: string;
  /** Extra environment of both processes. */
  env?: Record<string, string>;
  /** Extra environment of the first process only (e.g. its metrics port), read when it starts. */
  firstEnv?: () => Record<string, string>;
}

export function useTwoSignersOnOneStore(options: TwoSignersOptions) {
  const made: {
    dir?: string;
    store?: SignerDatabase;
    first?: TestSigner;
    second?: TestSigner;
    firstClient?: SignerClient;
    db?: pg.Client;
  } = {};
  const owner = privateKeyToAccount(generatePrivateKey());

  before(async () => {
    made.dir = fs.mkdtempSync(path.join(os.tmpdir(), `${options.prefix}-`));
    made.store = await createSignerDatabase();
    const env = { ...options.env, ...options.firstEnv?.() };
    made.first = await startTestSigner({ dir: made.dir, policyStore: made.store, env });
    const firstSocket = path.join(made.dir, 'first.sock');
    fs.renameSync(made.first.socketPath, firstSocket);
    made.firstClient = new SignerClient({ socketPath: firstSocket, timeoutMs: 30_000 });
    made.second = await startTestSigner({ dir: made.dir, policyStore: made.store, env: options.env });
    made.db = new pg.Client({ connectionString: made.store.connectionString });
    await made.db.connect();
  });
  after(async () => {
    await made.db?.end();
    made.firstClient?.close();
    await made.second?.stop();
    await made.first?.stop();
    await made.store?.drop();
    if (made.dir) fs.rmSync(made.dir, { recursive: true, force: true });
  });

  const firstClient = lateBound(() => made.firstClient, "the first signer's client");
  const second = lateBound(() => made.second, 'the second signer');
  const store = lateBound(() => made.store, "the signers' store");
  const db = lateBound(() => made.db, "the store's client");

  /** A new account of `owner`, a wallet of it, and operations on that account through the first ([0]) and the second ([1]) process. */
  async function account() {
    const created = await firstClient.call('create_account_key', { authority: await ownerAuthority(owner) });
    const ops = [
      walletOps({ client: firstClient } as TestSigner, created.account_key_ref),
      walletOps(second, created.account_key_ref),
    ];
    return { ops, wallet: await ops[0]!.wallet() };
  }

  /** `account()`, its wallet's policy signed by `owner` and set through the first process. */
  async function signedWallet(policy: WalletPolicyInput) {
    const made = await account();
    await firstClient.call('set_wallet_policy', await signedPolicy(owner, made.wallet.address, policy));
    return made;
  }

  const storedCount = async (address: string) =>
    (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM signer_spends WHERE address = $1', [
        address.toLowerCase(),
      ])
    ).rows[0]!.n;

  const storedSum = async (address: string) =>
    BigInt(
      (
        await db.query<{ sum: string }>(
          'SELECT coalesce(sum(amount), 0)::text AS sum FROM signer_spends WHERE address = $1',
          [address.toLowerCase()],
        )
      ).rows[0]!.sum,
    );

  return { owner, firstClient, second, store, db, account, signedWallet, storedCount, storedSum };
}

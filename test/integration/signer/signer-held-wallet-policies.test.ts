/**
 * The signer keeps policy state only for wallets whose key it holds (signer/owner-policy/held-wallet-keys.ts), through
 * a real signer process on SoftHSM with its own PostgreSQL store. A wallet made before the store kept records is
 * simulated by a wallet made by a signer without a store on the same token, before the signer with the store starts.
 *
 * Defends: a front that lies or was taken over growing the signer's store — a policy signed by a key of its choosing
 * for a made-up address (EVM or base58), or for a made-up address named with another wallet's key references, is
 * refused (`key_not_found`, rule `unknown_wallet`; `address_mismatch`, rule `key_of_address`) and nothing is written:
 * no wallet row, no history row, no generation raised. `get_wallet_policy` of such an address writes nothing. The
 * API's gateway answers the refusal as 403 `policy_signature_invalid`, rule `unknown_wallet`.
 * What stays: a wallet the store has no record of whose key the signer holds is bound to its first signer once its key
 * references prove it (`wallet_key`), and — from then on, in that process — without them; a wallet recorded under its
 * account needs none, also after a restart.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressDecoder } from '@solana/kit';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { SignerClient } from '../../../signer/protocol/signer-client.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';
import { SignerGateway } from '../../../src/api/signing/signer-gateway.js';
import { OwnerPolicyService } from '../../../src/api/wallets/owner-policy-service.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createSignerDatabase, type SignerDatabase } from '../../support/test-database.js';
import { ownerAuthority, refusal, signedPolicy } from './signer-test-helpers.js';

const madeUpEvm = () => privateKeyToAccount(generatePrivateKey()).address;
const madeUpSolana = () => getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));

describe('policy state only for wallets whose key the signer holds (signer socket, own store)', function () {
  this.timeout(180_000);
  const held: { dir?: string; store?: SignerDatabase; signer?: TestSigner; db?: pg.Client } = {};
  /** A wallet made by a signer without a store (before the store kept records), and its account's key reference. */
  const legacy = { account_key_ref: '', wallet_key_ref: '', address: '' };
  /** Another such wallet, bound through the API's owner-policy service. */
  const legacyViaApi = { wallet_key_ref: '', address: '' };
  const start = () => startTestSigner({ dir: held.dir!, policyStore: held.store! });
  const signer = () => held.signer!;
  /** Whoever signs the legacy wallet's first policy. */
  const first = privateKeyToAccount(generatePrivateKey());

  before(async () => {
    held.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-held-wallets-'));
    held.store = await createSignerDatabase();
    const bare = await startTestSigner({ dir: held.dir });
    try {
      legacy.account_key_ref = (await bare.client.call('create_account_key', {})).account_key_ref;
      const made = await bare.client.createWalletKey({ account_key_ref: legacy.account_key_ref });
      Object.assign(legacy, { wallet_key_ref: made.wallet_key_ref, address: made.address });
      const other = await bare.client.createWalletKey({ account_key_ref: legacy.account_key_ref });
      Object.assign(legacyViaApi, { wallet_key_ref: other.wallet_key_ref, address: other.address });
    } finally {
      await bare.stop();
    }
    held.signer = await start();
    held.db = new pg.Client({ connectionString: held.store.connectionString });
    await held.db.connect();
  });
  after(async () => {
    await held.db?.end();
    await held.signer?.stop();
    await held.store?.drop();
    if (held.dir) fs.rmSync(held.dir, { recursive: true, force: true });
  });

  /** What the store holds: wallet rows, policy history rows, and its generation. */
  const stored = async () =>
    (
      await held.db!.query(
        `SELECT (SELECT count(*) FROM signer_wallets)::int AS wallets,
                (SELECT count(*) FROM signer_policy_history)::int AS policies,
                (SELECT generation FROM signer_store_generation)::int AS generation`,
      )
    ).rows[0] as { wallets: number; policies: number; generation: number };
  const set = (document: Record<string, unknown>) => signer().client.call('set_wallet_policy', document as never);
  const legacyKey = () => ({ account_key_ref: legacy.account_key_ref, wallet_key_ref: legacy.wallet_key_ref });

  it('refuses a policy for a made-up address, EVM or base58, and writes nothing; reading one writes nothing', async () => {
    const attacker = privateKeyToAccount(generatePrivateKey());
    const before = await stored();
    for (const address of [madeUpEvm(), madeUpSolana(), madeUpEvm()]) {
      const refused = await refusal(set(await signedPolicy(attacker, address, { per_tx_cap_usd: '1' })));
      assert.deepEqual([refused.code, refused.details.rule], ['key_not_found', 'unknown_wallet'], address);
      const read = await signer().client.call('get_wallet_policy', { address });
      assert.deepEqual([read.authority, read.current], [null, null]);
    }
    // Another wallet's key references do not make a made-up address held.
    const named = { ...(await signedPolicy(attacker, madeUpEvm(), {})), wallet_key: legacyKey() };
    const mismatch = await refusal(set(named));
    assert.deepEqual([mismatch.code, mismatch.details.rule], ['address_mismatch', 'key_of_address']);
    assert.deepEqual(await stored(), before, 'no wallet row, no history row, no generation raised');
  });

  it("the API's signer gateway answers it as 403 policy_signature_invalid, rule unknown_wallet", async () => {
    const gateway = new SignerGateway(
      new SignerClient({ socketPath: signer().socketPath, timeoutMs: 30_000 }),
      createTreasuryMetrics(),
    );
    try {
      const before = await stored();
      const document = await signedPolicy(privateKeyToAccount(generatePrivateKey()), madeUpEvm(), {});
      const err = await gateway.call('set_wallet_policy', document).then(
        () => assert.fail('the signer accepted a policy for a made-up address'),
        (thrown: unknown) => thrown,
      );
      assert.ok(err instanceof AppError);
      assert.deepEqual(
        [err.status, err.code, err.details],
        [403, 'policy_signature_invalid', { rule: 'unknown_wallet' }],
      );
      assert.deepEqual(await stored(), before);
    } finally {
      gateway.close();
    }
  });

  it('binds a wallet made before the store kept records to its first signer once its key proved held', async () => {
    const intruder = privateKeyToAccount(generatePrivateKey());
    const before = await stored();
    const unproved = await refusal(set(await signedPolicy(first, legacy.address, { per_tx_cap_usd: '1' })));
    assert.deepEqual([unproved.code, unproved.details.rule], ['key_not_found', 'unknown_wallet']);
    assert.deepEqual(await stored(), before);

    const document = {
      ...(await signedPolicy(first, legacy.address, { per_tx_cap_usd: '1' })),
      wallet_key: legacyKey(),
    };
    const kept = await set(document);
    assert.deepEqual(kept.authority, { kind: 'first_signer', address: first.address });
    const after = await stored();
    assert.deepEqual([after.wallets, after.policies], [before.wallets + 1, before.policies + 1]);
    // Proved once in this process: the next version needs no references; the binding holds against other keys.
    assert.equal((await set(await signedPolicy(first, legacy.address, { per_tx_cap_usd: '0.5' }, 2))).version, 2);
    const byIntruder = await refusal(set(await signedPolicy(intruder, legacy.address, {}, 3)));
    assert.deepEqual([byIntruder.code, byIntruder.details.rule], ['policy_signature_invalid', 'authority']);
  });

  it('after a restart: a first signer’s row needs its key again, a wallet recorded under its account does not', async () => {
    const owner = privateKeyToAccount(generatePrivateKey());
    const account = await signer().client.call('create_account_key', { authority: await ownerAuthority(owner) });
    const recorded = await signer().client.createWalletKey({ account_key_ref: account.account_key_ref });
    await held.signer!.stop();
    held.signer = await start();

    const read = await signer().client.call('get_wallet_policy', { address: legacy.address });
    assert.deepEqual([read.authority, read.current?.version], [{ kind: 'first_signer', address: first.address }, 2]);
    // Its row names no account: this process has not seen its key, so its first signer's next document needs it.
    const before = await stored();
    const unproved = await refusal(set(await signedPolicy(first, legacy.address, {}, 3)));
    assert.deepEqual([unproved.code, unproved.details.rule], ['key_not_found', 'unknown_wallet']);
    assert.deepEqual(await stored(), before);
    const proved = { ...(await signedPolicy(first, legacy.address, {}, 3)), wallet_key: legacyKey() };
    assert.equal((await set(proved)).version, 3);

    const kept = await set(await signedPolicy(owner, recorded.address, { per_tx_cap_usd: '1' }));
    assert.deepEqual(kept.authority, { kind: 'owner', address: owner.address });
  });

  it("the API's owner-policy service sends the wallet's key references: such a wallet binds through PUT …/policy/signed", async () => {
    const gateway = new SignerGateway(
      new SignerClient({ socketPath: signer().socketPath, timeoutMs: 30_000 }),
      createTreasuryMetrics(),
    );
    try {
      const wallet = { id: 'wal_legacy', address: legacyViaApi.address, wallet_key_ref: legacyViaApi.wallet_key_ref };
      const service = new OwnerPolicyService({
        signer: gateway,
        wallets: { getActive: async () => wallet as never, changed: () => undefined },
        accounts: { get: async () => ({ account_key_ref: legacy.account_key_ref }) as never },
        // What the API stores after the signer accepted is not under test here.
        store: { change: async () => ({ id: wallet.id, policy: {} }) } as never,
        metrics: createTreasuryMetrics(),
      });
      const { address: _address, ...document } = await signedPolicy(first, legacyViaApi.address, {
        per_tx_cap_usd: '1',
      });
      const answer = await service.setSigned('acc_legacy', wallet.id, document as never, 'test');
      assert.deepEqual(answer.owner_policy?.authority, { kind: 'first_signer', address: first.address });
      const read = await signer().client.call('get_wallet_policy', { address: legacyViaApi.address });
      assert.deepEqual([read.authority, read.current?.version], [{ kind: 'first_signer', address: first.address }, 1]);
    } finally {
      gateway.close();
    }
  });
});

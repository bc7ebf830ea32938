/**
 * Solana wallets through HTTP with the real signer (SoftHSM Ed25519 keys) and the offline Solana chain
 * (ops/solana/local-solana.ts) as TREASURY_SOLANA_RPC_URL: a wallet on `solana-devnet` has a base58 address
 * of its Ed25519 key and keeps the wallet view's shape; its balance is the USDC of its associated token
 * account (0 while that account does not exist), served stale with the last figure while the RPC is down;
 * rotation is refused while the address holds USDC, and rotation and revocation destroy the key; a revoked
 * wallet answers 410; a payment while the RPC is down is 503 with nothing recorded. Without a Solana RPC no Solana chain is served.
 */
import assert from 'node:assert/strict';
import { pino } from 'pino';
import type { Address } from '@solana/kit';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { mintAgent, startTestTreasury, useTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { ExactMessageBuilder } from '../../../src/api/pay/solana/build-exact-message.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

describe('Solana wallets (HTTP, SoftHSM Ed25519, offline Solana chain)', function () {
  this.timeout(120_000);
  let solana: LocalSolana;
  let t: TestTreasury;
  let token: string;
  let accountId: string;

  before(async () => {
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    t = await startTestTreasury({ extraEnv: { TREASURY_SOLANA_RPC_URL: solana.rpcUrl } });
    ({ apiKey: token, accountId } = await mintAgent(t, 'solana-wallets'));
  });
  after(async () => {
    await t?.stop();
    await solana?.stop();
  });

  const create = (body: Record<string, unknown>) => t.request('POST', '/v1/wallets', { token, body });

  it('creates a wallet on solana-devnet (or its CAIP-2 id) with a base58 address of its Ed25519 key', async () => {
    for (const chain of ['solana-devnet', DEVNET]) {
      const res = await create({ label: 'sol', chain, policy: { per_tx_cap_usd: '1' } });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      assert.equal(res.body.chain, 'solana-devnet');
      assert.equal(res.body.network, DEVNET);
      assert.match(res.body.address, BASE58);
      assert.equal(res.body.policy_state, 'ceilings_only');
      const row = await t.db.knex('wallets').where({ id: res.body.id }).first();
      assert.equal(row.address, res.body.address, 'stored as spelled, unpadded');
      assert.match(row.wallet_key_ref, /ed25519/);
      assert.match(row.public_key, /^0x[0-9a-f]{64}$/);
      const read = await t.request('GET', `/v1/wallets/${res.body.id}`, { token });
      assert.deepEqual(read.body, res.body);
    }
  });

  it('the balance is the USDC of the associated token account: 0 before it exists, then what arrived', async () => {
    const wallet = (await create({ chain: 'solana-devnet' })).body;
    const empty = await t.request('GET', `/v1/wallets/${wallet.id}/balance`, { token });
    assert.equal(empty.status, 200, JSON.stringify(empty.body));
    assert.deepEqual(
      { ...empty.body, updated_at: undefined },
      {
        wallet_id: wallet.id,
        network: DEVNET,
        asset: MINT,
        address: wallet.address,
        balance_raw: '0',
        balance_usd: '0',
        stale: false,
        updated_at: undefined,
      },
    );
    await solana.faucet.fundUsdc(wallet.address as Address, 1_234_567n);
    const funded = await t.request('GET', `/v1/wallets/${wallet.id}/balance`, { token });
    assert.equal(funded.body.balance_raw, '1234567');
    assert.equal(funded.body.balance_usd, '1.234567');
    assert.equal(funded.body.stale, false);
  });

  it('rotation is refused while the address holds USDC; with none it gets a new Ed25519 key; revoke → 410', async () => {
    const wallet = (await create({ chain: 'solana-devnet' })).body;
    await solana.faucet.fundUsdc(wallet.address as Address, 5n);
    const refused = await t.request('POST', `/v1/wallets/${wallet.id}/rotate`, { token, body: {} });
    assert.equal(refused.status, 409, JSON.stringify(refused.body));
    assert.equal(refused.body.error_code, 'wallet_has_balance');
    assert.equal(refused.body.balance_raw, '5');

    const empty = (await create({ chain: 'solana-devnet' })).body;
    const oldKeyRef = (await t.db.knex('wallets').where({ id: empty.id }).first()).wallet_key_ref as string;
    const rotated = await t.request('POST', `/v1/wallets/${empty.id}/rotate`, { token, body: {} });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(rotated.body.key_version, 2);
    assert.match(rotated.body.address, BASE58);
    assert.notEqual(rotated.body.address, empty.address);
    const history = await t.db.knex('wallet_keys').where({ wallet_id: empty.id }).orderBy('version');
    assert.deepEqual(
      history.map((h: { address: string }) => h.address),
      [empty.address, rotated.body.address],
    );
    assert.ok(history[0].destroyed_at, 'the old key is destroyed');
    // The signer's tombstone: the old key never signs again, even the x402 shape for its own address.
    const account = await t.db.knex('treasury_accounts').where({ id: accountId }).first();
    const messages = new ExactMessageBuilder({ url: solana.rpcUrl, timeoutMs: 5000, blockhashMaxAgeMs: 0 });
    const { message } = await messages.build(empty.address, {
      network: DEVNET,
      asset: MINT,
      amount: '1',
      payTo: 'SysvarRent111111111111111111111111111111111',
      maxTimeoutSeconds: 60,
      feePayer: solana.feePayer,
    });
    await assert.rejects(
      t.signer.client.signSolanaTransaction({
        account_key_ref: account.account_key_ref,
        wallet_key_ref: oldKeyRef,
        address: empty.address,
        network: DEVNET,
        message,
        pay_to: 'SysvarRent111111111111111111111111111111111',
      }),
      (err: unknown) => err instanceof SignerError && err.code === 'key_destroyed',
    );

    const revoked = await t.request('POST', `/v1/wallets/${empty.id}/revoke`, { token, body: {} });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    for (const suffix of ['', '/balance']) {
      const gone = await t.request('GET', `/v1/wallets/${empty.id}${suffix}`, { token });
      assert.equal(gone.status, 410, suffix);
      assert.equal(gone.body.error_code, 'wallet_revoked');
    }
    const keys = await t.db.knex('wallet_keys').where({ wallet_id: empty.id }).orderBy('version');
    assert.ok(
      keys.every((k: { destroyed_at: Date | null }) => k.destroyed_at),
      'every key destroyed',
    );
  });

  it('takes an unsigned policy with base58 payees (owner-signed ones: owner-signed-policy-solana.test.ts)', async () => {
    const wallet = (await create({ chain: 'solana-devnet' })).body;
    const payee = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
    const put = await t.request('PUT', `/v1/wallets/${wallet.id}/policy`, {
      token,
      body: { per_tx_cap_usd: '2', counterparty_blocklist: [payee] },
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual(put.body.policy.counterparty_blocklist, [payee]);
    assert.equal(put.body.owner_policy.state, 'ceilings_only');
  });

  it('the database refuses a base58 address on an EVM network and a 0x address on a Solana one', async () => {
    const wallet = (await create({ chain: 'solana-devnet' })).body;
    await assert.rejects(
      t.db.knex('wallets').where({ id: wallet.id }).update({ network: 'eip155:84532' }),
      /wallets_address_spelling/,
    );
    await assert.rejects(
      t.db
        .knex('wallets')
        .where({ id: wallet.id })
        .update({ address: `0x${'ab'.repeat(20)}` }),
      /wallets_address_spelling/,
    );
  });

  it('serves a stale balance with its time while the RPC is down', async () => {
    const wallet = (await create({ chain: 'solana-devnet' })).body;
    await solana.faucet.fundUsdc(wallet.address as Address, 42n);
    const fresh = await t.request('GET', `/v1/wallets/${wallet.id}/balance`, { token });
    assert.equal(fresh.body.balance_raw, '42');
    await solana.stop();
    const stale = await t.request('GET', `/v1/wallets/${wallet.id}/balance`, { token });
    assert.equal(stale.status, 200, JSON.stringify(stale.body));
    assert.equal(stale.body.stale, true);
    assert.equal(stale.body.balance_raw, '42');
    assert.equal(stale.body.updated_at, fresh.body.updated_at);

    // A wallet's first payment reads the mint from the RPC: 503 chain_unavailable, nothing decided or recorded.
    const paid = await t.request('POST', `/v1/wallets/${wallet.id}/pay`, {
      token,
      body: {
        payment_requirements: {
          scheme: 'exact',
          network: DEVNET,
          asset: MINT,
          amount: '10000',
          payTo: 'SysvarRent111111111111111111111111111111111',
          maxTimeoutSeconds: 60,
          extra: { feePayer: solana.feePayer },
        },
      },
    });
    assert.equal(paid.status, 503, JSON.stringify(paid.body));
    assert.equal(paid.body.error_code, 'chain_unavailable');
    assert.deepEqual(await t.db.knex('authorizations').where({ wallet_id: wallet.id }), []);
    assert.deepEqual(await t.db.knex('policy_decisions').where({ wallet_id: wallet.id }), []);
  });
});

describe('Solana wallets without a Solana RPC', function () {
  this.timeout(120_000);
  const t = useTestTreasury();

  it('serves no Solana chain', async () => {
    const { apiKey } = await mintAgent(t, 'no-solana');
    const res = await t.request('POST', '/v1/wallets', { token: apiKey, body: { chain: 'solana-devnet' } });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error_code, 'chain_not_supported');
    assert.ok(!res.body.supported.includes('solana-devnet'));
  });
});

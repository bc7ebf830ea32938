/**
 * Sub-wallet lifecycle through HTTP with the real signer: create, list, read, rotate (same id, new
 * address, history kept, old DEK destroyed so it can never sign again), revoke (410 everywhere, sibling
 * unaffected), and the audit ledger's hash chain over all of it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { getAddress } from 'viem';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import { SignerError } from '../../../signer/protocol/signer-client.js';
import { verifyAuditChain } from '../../../src/api/audit/audit-ledger.js';
import { mintAgent, useTestTreasury } from '../../support/api-harness.js';
import { nodeArgsFor } from '../../../bin/build-freshness.mjs';

const USDC_SEPOLIA = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

function authorizationFor(from: string) {
  const now = Math.floor(Date.now() / 1000);
  return {
    domain: { name: 'USDC', version: '2', chainId: 84532, verifyingContract: USDC_SEPOLIA },
    message: {
      from,
      to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      value: '10000',
      validAfter: String(now - 60),
      validBefore: String(now + 300),
      nonce: `0x${'ab'.repeat(32)}`,
    },
  };
}

/** These wallets are on a network with no RPC configured here: their balance cannot be read, so rotating or revoking them is an explicit abandon. */
const ABANDON = { abandon_balance: true };

describe('wallet lifecycle (HTTP, SoftHSM, PostgreSQL)', function () {
  this.timeout(120_000);
  const t = useTestTreasury();
  let token: string;
  let accountId: string;
  before(async () => {
    ({ apiKey: token, accountId } = await mintAgent(t, 'lifecycle'));
  });

  /** Signs `typed` (by default a fresh authorization from `address`) with the stored key, through the signer. */
  async function signWithStoredKey(
    walletId: string,
    keyRef: string,
    address: string,
    typed: ReturnType<typeof authorizationFor> = authorizationFor(address),
  ) {
    const account = await t.db.knex('treasury_accounts').where({ id: accountId }).first();
    return t.signer.client.signTransferAuthorization({
      account_key_ref: account.account_key_ref,
      wallet_key_ref: keyRef,
      address,
      ...typed,
    });
  }

  it('creates a wallet with its own checksummed address and policy, and lists it', async () => {
    const policy = { per_tx_cap_usd: '5', daily_cap_usd: '50' };
    const res = await t.request('POST', '/v1/wallets', {
      token,
      body: { label: 'research', chain: 'base-sepolia', policy },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(res.body.id, /^wal_[0-9a-f]{24}$/);
    assert.equal(res.body.address, getAddress(res.body.address));
    assert.equal(res.body.status, 'active');
    assert.equal(res.body.network, 'eip155:84532');
    assert.equal(res.body.policy.per_tx_cap_usd, '5');
    assert.equal(res.body.wallet_key_ref, undefined);

    const second = await t.request('POST', '/v1/wallets', { token, body: { label: 'ops' } });
    assert.notEqual(second.body.address, res.body.address);
    const list = await t.request('GET', '/v1/wallets', { token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.wallets.map((w: { id: string }) => w.id),
      [res.body.id, second.body.id],
    );
    const one = await t.request('GET', `/v1/wallets/${res.body.id}`, { token });
    assert.equal(one.body.address, res.body.address);
  });

  it('a wallet signature recovers to the wallet address', async () => {
    const created = await t.request('POST', '/v1/wallets', { token, body: {} });
    const row = await t.db.knex('wallets').where({ id: created.body.id }).first();
    // One authorization, signed and recovered: its validity window is read from the clock once, so a second
    // that turns between signing and recovering cannot make the two messages differ.
    const typed = authorizationFor(created.body.address);
    const sig = await signWithStoredKey(created.body.id, row.wallet_key_ref, created.body.address, typed);
    const recovered = await recoverAuthorizationSigner(typed.message, sig.signature, typed.domain);
    assert.equal(recovered, created.body.address);
  });

  it('rotate keeps the id, changes the address, keeps history and destroys the old DEK', async () => {
    const created = await t.request('POST', '/v1/wallets', { token, body: { label: 'rotating' } });
    const before = await t.db.knex('wallets').where({ id: created.body.id }).first();
    const rotated = await t.request('POST', `/v1/wallets/${created.body.id}/rotate`, { token, body: ABANDON });
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.equal(rotated.body.id, created.body.id);
    assert.notEqual(rotated.body.address, created.body.address);
    assert.equal(rotated.body.key_version, 2);

    const history = await t.db.knex('wallet_keys').where({ wallet_id: created.body.id }).orderBy('version');
    assert.deepEqual(
      history.map((h: { address: string }) => h.address),
      [created.body.address, rotated.body.address],
    );
    assert.ok(history[0].retired_at && history[0].destroyed_at, 'old key retired and destroyed');
    assert.equal(history[0].wallet_key_ref, null);

    await assert.rejects(
      signWithStoredKey(created.body.id, before.wallet_key_ref, created.body.address),
      (err: unknown) => err instanceof SignerError && err.code === 'key_destroyed',
    );
    const after = await t.db.knex('wallets').where({ id: created.body.id }).first();
    const fresh = await signWithStoredKey(created.body.id, after.wallet_key_ref, rotated.body.address);
    assert.match(fresh.signature, /^0x[0-9a-f]{130}$/i);
  });

  it('revoke answers 410 on every wallet route and leaves siblings working', async () => {
    const doomed = await t.request('POST', '/v1/wallets', { token, body: { label: 'doomed' } });
    const sibling = await t.request('POST', '/v1/wallets', { token, body: { label: 'sibling' } });
    const keyRef = (await t.db.knex('wallets').where({ id: doomed.body.id }).first()).wallet_key_ref;
    const revoked = await t.request('POST', `/v1/wallets/${doomed.body.id}/revoke`, { token, body: ABANDON });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.status, 'revoked');
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/rotate'],
      ['POST', '/revoke'],
    ] as const) {
      const res = await t.request(method, `/v1/wallets/${doomed.body.id}${suffix}`, { token });
      assert.equal(res.status, 410, `${method} ${suffix}`);
      assert.equal(res.body.error_code, 'wallet_revoked');
    }
    await assert.rejects(
      signWithStoredKey(doomed.body.id, keyRef, doomed.body.address),
      (err: unknown) => err instanceof SignerError && err.code === 'key_destroyed',
    );
    const ok = await t.request('GET', `/v1/wallets/${sibling.body.id}`, { token });
    assert.equal(ok.status, 200);
    const rotated = await t.request('POST', `/v1/wallets/${sibling.body.id}/rotate`, { token, body: ABANDON });
    assert.equal(rotated.status, 200);
    const listed = await t.request('GET', '/v1/wallets?status=revoked', { token });
    assert.deepEqual(
      listed.body.wallets.map((w: { id: string }) => w.id),
      [doomed.body.id],
    );
  });

  it('records every change in a hash chain that verifies, and names the first tampered row', async () => {
    const created = await t.request('POST', '/v1/wallets', { token, body: { label: 'audited' } });
    await t.request('POST', `/v1/wallets/${created.body.id}/rotate`, { token, body: ABANDON });
    await t.request('POST', `/v1/wallets/${created.body.id}/revoke`, { token, body: ABANDON });
    const events = await t.db.knex('audit_events').where({ chain_key: created.body.id }).orderBy('seq');
    assert.deepEqual(
      events.map((e: { event_type: string }) => e.event_type),
      ['wallet.created', 'wallet.rotated', 'wallet.revoked'],
    );
    assert.deepEqual(await verifyAuditChain(t.db.knex, created.body.id), { chains: 1, rows: 3, ok: true });

    await assert.rejects(
      t.db.knex('audit_events').where({ id: events[1].id }).update({ actor: 'mallory' }),
      /append-only/,
    );
    await assert.rejects(t.db.knex('audit_events').where({ id: events[1].id }).delete(), /append-only/);

    await t.db.knex.raw('ALTER TABLE audit_events DISABLE TRIGGER audit_events_no_update');
    await t.db
      .knex('audit_events')
      .where({ id: events[1].id })
      .update({ payload: JSON.stringify({ new_address: '0x0000000000000000000000000000000000000000' }) });
    await t.db.knex.raw('ALTER TABLE audit_events ENABLE TRIGGER audit_events_no_update');
    const broken = await verifyAuditChain(t.db.knex, created.body.id);
    assert.equal(broken.ok, false);
    assert.deepEqual(broken.firstBroken, {
      id: String(events[1].id),
      chain_key: created.body.id,
      seq: 2,
      reason: 'hash_mismatch',
    });

    const cli = (() => {
      try {
        execFileSync(process.execPath, [...nodeArgsFor('src/api/audit/audit-cli.ts'), 'verify', created.body.id], {
          env: { ...process.env, DATABASE_URL: t.db.connectionString },
          stdio: 'pipe',
        });
        return { code: 0, out: '' };
      } catch (err) {
        return { code: (err as { status: number }).status, out: String((err as { stdout: Buffer }).stdout) };
      }
    })();
    assert.equal(cli.code, 4);
    assert.equal(JSON.parse(cli.out).firstBroken.seq, 2);
  });

  it('lists the wallets of an account page by page: every wallet once, oldest first, whatever the page size', async () => {
    const minted = await t.request('POST', '/v1/treasury', {
      token: t.adminToken,
      body: { owner_type: 'agent', owner_id: 'many-wallets' },
    });
    const own = minted.body.api_key as string;
    const created: string[] = [];
    for (let i = 0; i < 7; i++)
      created.push((await t.request('POST', '/v1/wallets', { token: own, body: { label: `w${i}` } })).body.id);
    await t.request('POST', `/v1/wallets/${created[3]}/revoke`, { token: own, body: ABANDON });

    const walk = async (query: string) => {
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const res = await t.request('GET', `/v1/wallets?${query}${cursor ? `&cursor=${cursor}` : ''}`, { token: own });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        pages.push(res.body.wallets.map((w: { id: string }) => w.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      return pages;
    };
    assert.deepEqual(await walk('limit=3'), [created.slice(0, 3), created.slice(3, 6), created.slice(6)]);
    assert.deepEqual(await walk('limit=7'), [created], 'a page exactly as long as the list is the last one');
    assert.deepEqual(
      (await walk('limit=2&status=active')).flat(),
      created.filter((_, i) => i !== 3),
    );
    // A cursor from another account names a position, not its wallets.
    for (const label of ['theirs-1', 'theirs-2']) await t.request('POST', '/v1/wallets', { token, body: { label } });
    const mine = await t.request('GET', '/v1/wallets?limit=1', { token });
    assert.ok(mine.body.next_cursor);
    const foreign = await t.request('GET', `/v1/wallets?limit=500&cursor=${mine.body.next_cursor}`, { token: own });
    assert.ok(foreign.body.wallets.every((w: { id: string }) => created.includes(w.id)));

    for (const cursor of [
      'not-a-cursor',
      Buffer.from('2026-01-01T00:00:00.000Z|led_' + 'a'.repeat(24)).toString('base64url'),
      Buffer.from(`yesterday|${created[0]}`).toString('base64url'),
      'a'.repeat(201),
      'x%20y',
    ]) {
      const res = await t.request('GET', `/v1/wallets?cursor=${cursor}`, { token: own });
      assert.equal(res.status, 400, cursor);
      assert.equal(res.body.error_code, 'invalid_request', cursor);
    }
  });

  it('destroys retired keys left undestroyed (signer away during a rotation) on reconcile', async () => {
    const created = await t.request('POST', '/v1/wallets', { token, body: { label: 'reconcile' } });
    const account = await t.db.knex('treasury_accounts').where({ id: accountId }).first();
    // A key retired while the signer was unreachable: recorded, retired, not yet destroyed.
    const stale = await t.signer.client.createWalletKey({ account_key_ref: account.account_key_ref });
    await t.db.knex('wallet_keys').insert({
      wallet_id: created.body.id,
      version: 0,
      address: stale.address,
      public_key: stale.public_key,
      wallet_key_ref: stale.wallet_key_ref,
      created_at: new Date(),
      retired_at: new Date(),
    });
    await signWithStoredKey(created.body.id, stale.wallet_key_ref, stale.address);
    assert.equal(await t.app.services.wallets.destroyRetiredKeys(), 1);
    await assert.rejects(
      signWithStoredKey(created.body.id, stale.wallet_key_ref, stale.address),
      (err: unknown) => err instanceof SignerError && err.code === 'key_destroyed',
    );
    const row = await t.db.knex('wallet_keys').where({ wallet_id: created.body.id, version: 0 }).first();
    assert.ok(row.destroyed_at);
    assert.equal(row.wallet_key_ref, null);
    assert.equal(await t.app.services.wallets.destroyRetiredKeys(), 0, 'nothing left to do');
  });

  it('refuses an unknown chain with the list of supported chains', async () => {
    const res = await t.request('POST', '/v1/wallets', { token, body: { chain: 'dogechain' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.error_code, 'chain_not_supported');
    assert.ok(res.body.supported.includes('base'));
  });
});

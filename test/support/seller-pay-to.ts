/**
 * Test helpers for verified seller revenue: prove a pay-to address for a seller (POST /v1/sellers/:id/pay-to
 * with the address's EIP-191 signature of the claim message), wait for a ledger row to leave a state, mine
 * blocks on anvil, and register a seller with one priced endpoint.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { getAddressDecoder, getBase58Decoder, type Address } from '@solana/kit';
import type { Knex } from 'knex';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { payToClaimMessage } from '../../src/api/sellers/seller-pay-to-service.js';
import type { TestTreasury } from './api-harness.js';
import { loadScaledDeadline } from './load-scaled-deadline.js';

export async function provePayTo(
  t: TestTreasury,
  session: string,
  sellerId: string,
  payTo: PrivateKeyAccount,
): Promise<void> {
  const signature = await payTo.signMessage({ message: payToClaimMessage(sellerId, payTo.address) });
  const res = await t.request('POST', `/v1/sellers/${sellerId}/pay-to`, {
    token: session,
    body: { address: payTo.address, signature },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** An Ed25519 key the test holds: its Solana address, and its signature (base58) of a message. */
export function solanaPayToKey(): { address: Address; sign(message: string): string } {
  const secret = new Uint8Array(randomBytes(32));
  const address = getAddressDecoder().decode(ed25519.getPublicKey(secret));
  const sign = (message: string) => getBase58Decoder().decode(ed25519.sign(new TextEncoder().encode(message), secret));
  return { address, sign };
}

/** Proves a Solana pay-to for the seller: the address's Ed25519 signature of the claim message. */
export async function proveSolanaPayTo(
  t: TestTreasury,
  session: string,
  sellerId: string,
  key: ReturnType<typeof solanaPayToKey>,
): Promise<void> {
  const res = await t.request('POST', `/v1/sellers/${sellerId}/pay-to`, {
    token: session,
    body: { address: key.address, signature: key.sign(payToClaimMessage(sellerId, key.address)) },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** A seller registered by the owner's `session`, with its service PAT and a proven pay-to key. */
export interface ProvenSeller {
  seller_id: string;
  pat: string;
  payTo: PrivateKeyAccount;
}

/** Registers a seller in `payoutMode` with the owner's `session` and proves a fresh pay-to address for it. */
export async function newProvenSeller(
  t: TestTreasury,
  session: string,
  name: string,
  payoutMode: 'direct' | 'platform_mor',
): Promise<ProvenSeller> {
  const created = await t.request('POST', '/v1/sellers', { token: session, body: { name, payout_mode: payoutMode } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const seller = {
    seller_id: created.body.seller_id as string,
    pat: created.body.pat as string,
    payTo: privateKeyToAccount(generatePrivateKey()),
  };
  await provePayTo(t, session, seller.seller_id, seller.payTo);
  return seller;
}

export interface LedgerRowView {
  id: string;
  tx_hash: string;
  status: 'pending' | 'verified' | 'rejected';
  reason: string | null;
  confirmations: number | null;
  amount_usd: string;
}

/**
 * The seller's row for `txHash` once `until` holds for it (polled through GET /v1/ledger, up to `ms` on an idle
 * machine, stretched by its load: ./load-scaled-deadline.ts).
 */
export async function waitForLedgerRow(
  t: TestTreasury,
  token: string,
  txHash: string,
  until: (row: LedgerRowView) => boolean,
  ms = 15_000,
): Promise<LedgerRowView> {
  const deadline = loadScaledDeadline(ms);
  let last: LedgerRowView | undefined;
  for (;;) {
    const res = await t.request('GET', '/v1/ledger?limit=200', { token });
    // A 0x hash is listed lower-case, a Solana signature as reported (base58 is case-sensitive).
    last = (res.body.entries as LedgerRowView[]).find(
      (e) => e.tx_hash === txHash || e.tx_hash === txHash.toLowerCase(),
    );
    if (last && until(last)) return last;
    if (deadline.passed())
      assert.fail(
        `ledger row ${txHash} did not reach the state in ${deadline.describe()}; last: ${JSON.stringify(last)}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Mines `blocks` empty blocks on anvil. */
export async function mineBlocks(rpcUrl: string, blocks: number): Promise<void> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: [`0x${blocks.toString(16)}`] }),
  });
  const body = (await res.json()) as { error?: unknown };
  assert.equal(body.error, undefined, JSON.stringify(body));
}

/**
 * TEST FIXTURE, no chain involved: marks a seller's pending ledger rows verified directly in PostgreSQL, as the
 * ledger verifier does after an on-chain check (the rollup triggers then count them). For suites about what
 * verified rows add up to, not about verification (that is test/integration/api/ledger-verification.test.ts).
 */
export async function markLedgerVerifiedForTest(knex: Knex, sellerId: string): Promise<number> {
  return knex('ledger_entries')
    .where({ seller_id: sellerId, status: 'pending' })
    .update({ status: 'verified', reason: null, verified_at: new Date(), confirmations: 1, log_index: 0 });
}

/**
 * Registers a seller (POST /v1/sellers with `seller`, as `session`) and one priced endpoint of it (POST
 * /v1/sellers/:id/endpoints with `endpoint`, as the seller's service PAT), asserting 201 for both; the
 * seller as created (its id and service PAT among the rest).
 */
export async function sellerWithEndpoint(
  t: Pick<TestTreasury, 'request'>,
  session: string,
  seller: { name: string; slug: string },
  endpoint: { path: string; price: string; method?: string },
): Promise<any> {
  const created = await t.request('POST', '/v1/sellers', { token: session, body: seller });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const ep = await t.request('POST', `/v1/sellers/${created.body.seller_id}/endpoints`, {
    token: created.body.pat,
    body: endpoint,
  });
  assert.equal(ep.status, 201, JSON.stringify(ep.body));
  return created.body;
}

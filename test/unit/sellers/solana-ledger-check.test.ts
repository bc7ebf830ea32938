/**
 * The ledger's Solana check names a transaction by its id (src/api/sellers/ledger/solana-ledger-check.ts): an
 * endpoint's answer for a transaction whose id (its first signature) is not the row's `tx_hash` — one found by
 * a later signature — is judged as no transaction, so one transfer can never back two rows under two names.
 * The cluster is read from a loopback JSON-RPC endpoint; the transaction read is the check's own seam.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { SolanaLedgerCheck } from '../../../src/api/sellers/ledger/solana-ledger-check.js';
import type { SolanaTransactionRead } from '../../../src/api/chain/solana-transaction-reader.js';

const DEVNET_GENESIS = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';
const address = () => base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const signature = () => base58.encode(new Uint8Array(64).fill(7));

describe('the ledger’s Solana check: a row names its transaction by its id', () => {
  let server: http.Server;
  let url: string;
  before(async () => {
    server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: DEVNET_GENESIS }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const landedAs = (id: string): SolanaTransactionRead => ({
    kind: 'found',
    tx: {
      confirmationStatus: 'finalized',
      confirmations: undefined,
      failed: false,
      accountKeys: [],
      instructions: [],
      preTokenBalances: [],
      postTokenBalances: [],
      messageHash: `0x${'ab'.repeat(32)}`,
      id,
    },
  });

  it('a transaction answered for a row whose tx_hash is not its id is no transaction; its own id is judged', async () => {
    const id = signature();
    const later = base58.encode(new Uint8Array(64).fill(9));
    const row = (txHash: string) => ({
      network: SOLANA_DEVNET_CAIP2,
      tx_hash: txHash,
      payer: address(),
      amount_micro: '1000',
    });
    const check = new SolanaLedgerCheck({ rpcUrl: url, timeoutMs: 2000, read: async () => landedAs(id) });
    assert.deepEqual(await check.check(row(later), [address()], []), { kind: 'not_found' });
    const own = await check.check(row(id), [address()], []);
    assert.equal(own.kind, 'rejected', 'judged as a transfer (this one moves nothing)');
    assert.equal((own as { reason: string }).reason, 'asset_not_transferred');
  });
});

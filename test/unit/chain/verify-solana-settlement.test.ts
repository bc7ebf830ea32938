/**
 * verifySolanaSettlement (src/api/chain/verify-solana-settlement.ts), its checks in their order: not confirmed
 * → 409 settlement_unconfirmed; named by a signature other than its id → authorization_mismatch; failed →
 * reverted; another message than the one signed → authorization_mismatch; a message whose transfer does not
 * move the signed amount from the wallet to the payee → authorization_mismatch; otherwise the signed amount.
 * The real stack (the offline chain, the SDK, the API) is test/e2e/solana-settlement.test.ts.
 */
import assert from 'node:assert/strict';
import { verifySolanaSettlement, type SignedSolanaTransfer } from '../../../src/api/chain/verify-solana-settlement.js';
import type { ReadSolanaTransaction } from '../../../src/api/chain/solana-transaction-reader.js';
import { AppError } from '../../../src/api/errors/app-error.js';

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const [SOURCE, DEST, WALLET, PAYEE] = [
  'So11111111111111111111111111111111111111112',
  'SysvarRent111111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
];
const ID = '5'.repeat(87);
const HASH = `0x${'ab'.repeat(32)}`;

function transferChecked(amount: bigint): Uint8Array {
  const data = Buffer.alloc(10);
  data[0] = 12;
  data.writeBigUInt64LE(amount, 1);
  data[9] = 6;
  return new Uint8Array(data);
}

/** A confirmed transaction named ID, of message HASH, moving `amount` of MINT from WALLET's account to DEST. */
function read(overrides: Partial<ReadSolanaTransaction> = {}, amount = 10_000n): ReadSolanaTransaction {
  return {
    messageHash: HASH,
    id: ID,
    confirmationStatus: 'confirmed',
    confirmations: 1,
    failed: false,
    accountKeys: [WALLET, SOURCE, MINT, DEST, TOKEN],
    instructions: [{ programIndex: 4, accounts: [1, 2, 3, 0], data: transferChecked(amount) }],
    preTokenBalances: [
      { accountIndex: 1, mint: MINT, owner: WALLET, amount: 50_000n },
      { accountIndex: 3, mint: MINT, owner: PAYEE, amount: 0n },
    ],
    postTokenBalances: [
      { accountIndex: 1, mint: MINT, owner: WALLET, amount: 50_000n - amount },
      { accountIndex: 3, mint: MINT, owner: PAYEE, amount },
    ],
    ...overrides,
  };
}

const signed: SignedSolanaTransfer = {
  messageHash: HASH,
  mint: MINT,
  from: WALLET,
  destinations: [DEST],
  amountRaw: 10_000n,
};
const refused = (code: string, reason?: string) => (err: unknown) =>
  err instanceof AppError && err.code === code && (reason === undefined || err.fields.reason === reason);

describe('Solana settlement check', () => {
  it('answers the signed amount for the very message signed, confirmed or finalized', () => {
    assert.equal(verifySolanaSettlement(ID, read(), signed), 10_000n);
    assert.equal(verifySolanaSettlement(ID, read({ confirmationStatus: 'finalized' }), signed), 10_000n);
    assert.equal(
      verifySolanaSettlement(ID, read(), { ...signed, messageHash: HASH.toUpperCase().replace('0X', '0x') }),
      10_000n,
    );
  });

  it('not confirmed yet: 409 settlement_unconfirmed with the confirmations, before anything else', () => {
    const pending = read({ confirmationStatus: 'processed', confirmations: 0, id: undefined, messageHash: undefined });
    assert.throws(
      () => verifySolanaSettlement(ID, pending, signed),
      (err: unknown) =>
        refused('settlement_unconfirmed')(err) &&
        (err as AppError).fields.confirmations === 0 &&
        (err as AppError).fields.required_commitment === 'confirmed',
    );
  });

  it('refuses, in order: another id, a failed transaction, another message, a transfer that is not the signed one', () => {
    const mismatch = refused('settlement_not_verified', 'authorization_mismatch');
    assert.throws(() => verifySolanaSettlement('4'.repeat(87), read(), signed), mismatch);
    assert.throws(
      () => verifySolanaSettlement(ID, read({ failed: true }), signed),
      refused('settlement_not_verified', 'reverted'),
    );
    assert.throws(() => verifySolanaSettlement(ID, read({ failed: true, id: 'x' }), signed), mismatch, 'id first');
    assert.throws(() => verifySolanaSettlement(ID, read({ messageHash: `0x${'cd'.repeat(32)}` }), signed), mismatch);
    assert.throws(() => verifySolanaSettlement(ID, read({}, 9_999n), signed), mismatch, 'another amount');
    assert.throws(
      () => verifySolanaSettlement(ID, read(), { ...signed, destinations: [PAYEE] }),
      mismatch,
      'another payee',
    );
    assert.throws(() => verifySolanaSettlement(ID, read(), { ...signed, from: PAYEE }), mismatch, 'another wallet');
    assert.throws(() => verifySolanaSettlement(ID, read(), { ...signed, mint: TOKEN }), mismatch, 'another mint');
  });
});

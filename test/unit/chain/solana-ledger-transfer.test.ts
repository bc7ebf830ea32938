/**
 * The Solana ledger check's verdicts in their order (src/api/chain/solana-ledger-transfer.ts): not confirmed
 * → pending; failed → transaction_reverted; no TransferChecked of the mint → asset_not_transferred; none to
 * the seller's token accounts → recipient_mismatch; none from an account the payer owned → payer_mismatch;
 * none of the exact amount, or a destination that did not grow by it → amount_mismatch; from an account one of
 * the seller's own addresses owns → self_payment; a match names its instruction index.
 */
import assert from 'node:assert/strict';
import {
  verifySolanaLedgerTransfer,
  type ExpectedSolanaTransfer,
  type LandedSolanaTransaction,
} from '../../../src/api/chain/solana-ledger-transfer.js';

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const MINT = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
const [SOURCE, DEST, PAYER, OTHER] = [
  'So11111111111111111111111111111111111111112',
  'SysvarRent111111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'Stake11111111111111111111111111111111111111',
];

/** TransferChecked data: 12, u64 amount (LE), u8 decimals. */
function transferChecked(amount: bigint): Uint8Array {
  const data = Buffer.alloc(10);
  data[0] = 12;
  data.writeBigUInt64LE(amount, 1);
  data[9] = 6;
  return new Uint8Array(data);
}

function landed(overrides: Partial<LandedSolanaTransaction> = {}, amount = 10_000n): LandedSolanaTransaction {
  // keys: 0 payer (authority), 1 source, 2 mint, 3 destination, 4 token program
  return {
    confirmationStatus: 'finalized',
    confirmations: undefined,
    failed: false,
    accountKeys: [PAYER, SOURCE, MINT, DEST, TOKEN],
    instructions: [{ programIndex: 4, accounts: [1, 2, 3, 0], data: transferChecked(amount) }],
    preTokenBalances: [
      { accountIndex: 1, mint: MINT, owner: PAYER, amount: 50_000n },
      { accountIndex: 3, mint: MINT, owner: OTHER, amount: 0n },
    ],
    postTokenBalances: [
      { accountIndex: 1, mint: MINT, owner: PAYER, amount: 50_000n - amount },
      { accountIndex: 3, mint: MINT, owner: OTHER, amount },
    ],
    ...overrides,
  };
}

const expected: ExpectedSolanaTransfer = { mint: MINT, payer: PAYER, destinations: [DEST], amountRaw: 10_000n };
const reasonOf = (tx: LandedSolanaTransaction, e = expected) => {
  const v = verifySolanaLedgerTransfer(tx, e);
  return v.kind === 'verified' ? 'verified' : v.reason;
};

describe('Solana ledger check', () => {
  it('verifies the exact transfer and names its instruction', () => {
    assert.deepEqual(verifySolanaLedgerTransfer(landed(), expected), {
      kind: 'verified',
      logIndexes: [0],
      confirmations: 32,
    });
    assert.equal(reasonOf(landed({ confirmationStatus: 'confirmed', confirmations: 3 })), 'verified');
  });

  it('answers each failure with its reason, in order', () => {
    assert.equal(reasonOf(landed({ confirmationStatus: 'processed', failed: true })), 'awaiting_confirmations');
    assert.equal(reasonOf(landed({ failed: true })), 'transaction_reverted');
    assert.equal(reasonOf(landed(), { ...expected, mint: OTHER }), 'asset_not_transferred');
    assert.equal(reasonOf(landed(), { ...expected, destinations: [OTHER] }), 'recipient_mismatch');
    assert.equal(reasonOf(landed(), { ...expected, payer: OTHER }), 'payer_mismatch');
    assert.equal(reasonOf(landed(), { ...expected, amountRaw: 10_001n }), 'amount_mismatch');
    assert.equal(reasonOf(landed(), { ...expected, ownAddresses: [OTHER, PAYER] }), 'self_payment');
    assert.equal(reasonOf(landed(), { ...expected, ownAddresses: [OTHER] }), 'verified', 'another own address');
  });

  it('the instruction alone is not enough: the destination must have grown by the amount', () => {
    const tx = landed();
    assert.equal(reasonOf({ ...tx, postTokenBalances: tx.preTokenBalances }), 'amount_mismatch');
  });

  it('a transfer by another program, or with trailing data, is not read as a payment', () => {
    const tx = landed();
    const ix = tx.instructions[0]!;
    assert.equal(reasonOf({ ...tx, instructions: [{ ...ix, programIndex: 0 }] }), 'asset_not_transferred');
    const longer = new Uint8Array([...ix.data, 0]);
    assert.equal(reasonOf({ ...tx, instructions: [{ ...ix, data: longer }] }), 'asset_not_transferred');
  });
});

/**
 * verifyLedgerTransfer on receipts built from real ERC-20 Transfer encodings: the depth is judged first, then
 * the receipt, the asset, the recipient, the payer, the amount and the seller paying itself, each with its
 * reason; a match answers the logs that back it (a Transfer among others — EIP-3009's AuthorizationUsed, another
 * token's Transfer).
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, erc20Abi, parseAbi, type Hex } from 'viem';
import { verifyLedgerTransfer, type ExpectedLedgerTransfer } from '../../../src/api/chain/verify-ledger-transfer.js';

const USDC: Hex = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const OTHER_TOKEN: Hex = '0x4444444444444444444444444444444444444444';
const PAYER: Hex = '0x1111111111111111111111111111111111111111';
const PAY_TO: Hex = '0x2222222222222222222222222222222222222222';
const STRANGER: Hex = '0x3333333333333333333333333333333333333333';
/** The seller's collection wallet on the network: one of its own addresses, though not where this row pays. */
const COLLECTION: Hex = '0x6666666666666666666666666666666666666666';

function transfer(logIndex: number, over: { from?: Hex; to?: Hex; value?: bigint; token?: Hex } = {}) {
  return {
    address: over.token ?? USDC,
    topics: encodeEventTopics({
      abi: erc20Abi,
      eventName: 'Transfer',
      args: { from: over.from ?? PAYER, to: over.to ?? PAY_TO },
    }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint256' }], [over.value ?? 10_000n]),
    logIndex,
  };
}

const authorizationUsed = (logIndex: number) => ({
  address: USDC,
  topics: encodeEventTopics({
    abi: parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']),
    eventName: 'AuthorizationUsed',
    args: { authorizer: PAYER, nonce: `0x${'77'.repeat(32)}` },
  }) as Hex[],
  data: '0x' as Hex,
  logIndex,
});

const expected: ExpectedLedgerTransfer = {
  asset: USDC,
  payer: PAYER.toUpperCase().replace('0X', '0x'),
  payTo: [STRANGER, PAY_TO.toLowerCase()],
  ownAddresses: [STRANGER, PAY_TO.toLowerCase(), COLLECTION],
  amountRaw: 10_000n,
  requiredConfirmations: 2,
};
const receipt = (
  logs: ReturnType<typeof transfer>[],
  over: { status?: 'success' | 'reverted'; confirmations?: number } = {},
) => ({ status: over.status ?? 'success', logs, confirmations: over.confirmations ?? 2 });

describe('verifyLedgerTransfer', () => {
  it('verifies a USDC Transfer of the amount from the payer to a pay-to, among other events, answering its log', () => {
    const verdict = verifyLedgerTransfer(
      receipt([authorizationUsed(0), transfer(1, { token: OTHER_TOKEN }), transfer(2)]),
      expected,
    );
    assert.deepEqual(verdict, { kind: 'verified', logIndexes: [2], confirmations: 2 });
  });

  it('waits for the depth before judging anything, even a reverted receipt', () => {
    assert.deepEqual(verifyLedgerTransfer(receipt([transfer(0)], { confirmations: 1 }), expected), {
      kind: 'pending',
      reason: 'awaiting_confirmations',
      confirmations: 1,
    });
    assert.deepEqual(
      verifyLedgerTransfer(receipt([], { status: 'reverted', confirmations: 0 }), expected).kind,
      'pending',
    );
  });

  const cases: Array<[string, ReturnType<typeof receipt>, string]> = [
    ['a reverted receipt', receipt([transfer(0)], { status: 'reverted' }), 'transaction_reverted'],
    [
      'no USDC Transfer (another token only)',
      receipt([transfer(0, { token: OTHER_TOKEN }), authorizationUsed(1)]),
      'asset_not_transferred',
    ],
    [
      'a Transfer to someone else',
      receipt([transfer(0, { to: '0x5555555555555555555555555555555555555555' })]),
      'recipient_mismatch',
    ],
    ['from another payer', receipt([transfer(0, { from: STRANGER })]), 'payer_mismatch'],
    [
      'of another amount',
      receipt([transfer(0, { value: 9_999n }), transfer(1, { value: 10_001n })]),
      'amount_mismatch',
    ],
  ];
  for (const [what, tx, reason] of cases) {
    it(`rejects ${what}: ${reason}`, () => {
      assert.deepEqual(verifyLedgerTransfer(tx, expected), { kind: 'rejected', reason, confirmations: 2 });
    });
  }

  it("rejects a Transfer from one of the seller's own addresses, even to itself: self_payment", () => {
    for (const own of [PAY_TO, STRANGER, COLLECTION]) {
      const tx = receipt([transfer(0, { from: own, to: PAY_TO })]);
      assert.deepEqual(verifyLedgerTransfer(tx, { ...expected, payer: own.toLowerCase() }), {
        kind: 'rejected',
        reason: 'self_payment',
        confirmations: 2,
      });
    }
    // Without the self check (no own addresses named) the same transfer would verify.
    const loop = receipt([transfer(0, { from: PAY_TO, to: PAY_TO })]);
    assert.equal(verifyLedgerTransfer(loop, { ...expected, payer: PAY_TO, ownAddresses: [] }).kind, 'verified');
  });

  it('answers every matching Transfer of one transaction (one verified row each)', () => {
    assert.deepEqual(verifyLedgerTransfer(receipt([transfer(3), transfer(4, { to: STRANGER })]), expected), {
      kind: 'verified',
      logIndexes: [3, 4],
      confirmations: 2,
    });
  });
});

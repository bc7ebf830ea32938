/**
 * uptoSettlementTransferLog on transactions built with the x402 upto proxy's own ABI: the log index of the
 * Transfer a settlement of exactly this Permit2 authorization made; nothing for a transaction that is not that
 * settlement, even when it moves the same amount from the same owner to the same payee.
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import {
  uptoSettlementTransferLog,
  type IndexedSettlementTransaction,
} from '../../../src/api/chain/upto-settlement-transfer.js';
import type { SignedUptoPermit } from '../../../src/api/chain/verify-upto-settlement.js';

const TOKEN: Hex = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const OWNER: Hex = '0x1111111111111111111111111111111111111111';
const PAYEE: Hex = '0x2222222222222222222222222222222222222222';
const FACILITATOR: Hex = '0x3333333333333333333333333333333333333333';
const SIGNATURE = `0x${'ab'.repeat(65)}` as Hex;

const permit: SignedUptoPermit = {
  owner: OWNER,
  token: TOKEN,
  maxRaw: 500_000n,
  nonce: 42n,
  deadline: 1_900_000_000n,
  witness: { to: PAYEE, facilitator: FACILITATOR, validAfter: 1_800_000_000n },
  signature: SIGNATURE,
};

const settle = (amount: bigint, nonce = permit.nonce) =>
  encodeFunctionData({
    abi: x402UptoPermit2ProxyABI,
    functionName: 'settle',
    args: [
      { permitted: { token: TOKEN, amount: permit.maxRaw }, nonce, deadline: permit.deadline },
      amount,
      OWNER,
      { to: PAYEE, facilitator: FACILITATOR, validAfter: permit.witness.validAfter },
      SIGNATURE,
    ],
  });

const transferLog = (value: bigint, logIndex: number, to: Hex = PAYEE) => ({
  address: TOKEN,
  topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: OWNER, to } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  logIndex,
});

const tx = (
  input: Hex,
  logs: IndexedSettlementTransaction['logs'],
  to: string = x402UptoPermit2ProxyAddress,
): IndexedSettlementTransaction => ({ to, input, status: 'success', logs });

describe('uptoSettlementTransferLog', () => {
  it("answers the log index of the settlement's own transfer", () => {
    const logs = [transferLog(7n, 3, OWNER), transferLog(10_000n, 4)];
    assert.equal(uptoSettlementTransferLog(tx(settle(10_000n), logs), permit, x402UptoPermit2ProxyAddress), 4);
  });

  it('answers nothing for the settlement of another authorization of the same owner and payee', () => {
    const logs = [transferLog(10_000n, 0)];
    assert.equal(
      uptoSettlementTransferLog(tx(settle(10_000n, 43n), logs), permit, x402UptoPermit2ProxyAddress),
      undefined,
    );
  });

  it('answers nothing for a plain transfer from the owner to the payee', () => {
    const input = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [PAYEE, 10_000n] });
    const logs = [transferLog(10_000n, 0)];
    assert.equal(uptoSettlementTransferLog(tx(input, logs, TOKEN), permit, x402UptoPermit2ProxyAddress), undefined);
  });

  it('answers nothing for a reverted settlement, and for a settlement of zero (nothing moved)', () => {
    const reverted = { ...tx(settle(10_000n), [transferLog(10_000n, 0)]), status: 'reverted' as const };
    assert.equal(uptoSettlementTransferLog(reverted, permit, x402UptoPermit2ProxyAddress), undefined);
    assert.equal(uptoSettlementTransferLog(tx(settle(0n), []), permit, x402UptoPermit2ProxyAddress), undefined);
  });
});

/**
 * tokenTransfers (src/api/chain/token-transfers.ts): only the token's ERC-20 Transfer events count. An
 * Approval log of the same token — what an EIP-2612 permit emits inside a settleWithPermit transaction —
 * is passed over, not decoded into a transfer with no sender.
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, erc20Abi, type Hex } from 'viem';
import { tokenTransfers } from '../../../src/api/chain/token-transfers.js';

const TOKEN = '0x1111111111111111111111111111111111111111';
const OWNER = '0x2222222222222222222222222222222222222222';
const PAYEE = '0x3333333333333333333333333333333333333333';
const PERMIT2 = '0x000000000022D473030F116dDEE9F6B43aC78BA3';

function log(eventName: 'Transfer' | 'Approval', a: Hex, b: Hex, value: bigint, address: string = TOKEN) {
  const args = eventName === 'Transfer' ? { from: a, to: b } : { owner: a, spender: b };
  const topics = encodeEventTopics({ abi: erc20Abi, eventName, args } as Parameters<typeof encodeEventTopics>[0]);
  return { address, topics: topics as Hex[], data: encodeAbiParameters([{ type: 'uint256' }], [value]) };
}

describe('tokenTransfers', () => {
  it("keeps the token's Transfer events in log order and passes over its Approval events and other contracts' logs", () => {
    const logs = [
      log('Approval', OWNER, PERMIT2, 100n),
      log('Transfer', OWNER, PAYEE, 40n),
      log('Transfer', OWNER, PAYEE, 7n, '0x4444444444444444444444444444444444444444'),
      log('Transfer', PAYEE, OWNER, 1n),
    ];
    const found = tokenTransfers(logs, TOKEN.toUpperCase().replace('0X', '0x'));
    assert.deepEqual(
      found.map((t) => [t.from.toLowerCase(), t.to.toLowerCase(), t.value]),
      [
        [OWNER, PAYEE, 40n],
        [PAYEE, OWNER, 1n],
      ],
    );
    assert.equal(found[0]!.log, logs[1]);
  });
});

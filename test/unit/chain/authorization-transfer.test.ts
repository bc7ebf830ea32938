/**
 * authorizationTransferLog (src/api/chain/authorization-transfer.ts): a transaction carried an EIP-3009
 * authorization only when the token emitted its AuthorizationUsed(authorizer, nonce) and, as its next log, the
 * Transfer that authorization signed (from, payee, value). Any other nonce, payee, value, order or contract
 * links nothing.
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, erc20Abi, parseAbi, type Hex } from 'viem';
import { authorizationTransferLog } from '../../../src/api/chain/authorization-transfer.js';

const TOKEN = '0x1111111111111111111111111111111111111111';
const OTHER_TOKEN = '0x4444444444444444444444444444444444444444';
const BUYER: Hex = '0x2222222222222222222222222222222222222222';
const PAYEE: Hex = '0x3333333333333333333333333333333333333333';
const NONCE: Hex = `0x${'ab'.repeat(32)}`;
const OTHER_NONCE: Hex = `0x${'cd'.repeat(32)}`;
const USED = parseAbi(['event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)']);

const used = (nonce: Hex, logIndex: number, address = TOKEN) => ({
  address,
  topics: encodeEventTopics({ abi: USED, eventName: 'AuthorizationUsed', args: { authorizer: BUYER, nonce } }) as Hex[],
  data: '0x' as Hex,
  logIndex,
});
const transfer = (to: Hex, value: bigint, logIndex: number, address = TOKEN) => ({
  address,
  topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: BUYER, to } }) as Hex[],
  data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  logIndex,
});
const signed = { from: BUYER, to: PAYEE, value: 500_000n, nonce: NONCE };

describe('authorizationTransferLog', () => {
  it("answers the Transfer log right after the authorization's AuthorizationUsed", () => {
    const logs = [transfer(PAYEE, 10_000n, 3), used(NONCE, 7), transfer(PAYEE, 500_000n, 8)];
    assert.equal(authorizationTransferLog(logs, TOKEN.toUpperCase().replace('0X', '0x'), signed), 8);
  });

  it('links nothing for another nonce, another payee or value, a Transfer alone, or another contract', () => {
    const cases = [
      [used(OTHER_NONCE, 1), transfer(PAYEE, 500_000n, 2)],
      [used(NONCE, 1), transfer(BUYER, 500_000n, 2)],
      [used(NONCE, 1), transfer(PAYEE, 10_000n, 2)],
      [transfer(PAYEE, 500_000n, 2)],
      [used(NONCE, 1, OTHER_TOKEN), transfer(PAYEE, 500_000n, 2, OTHER_TOKEN)],
      // The authorization's nonce spent, but the Transfer that follows is a different, cheaper one.
      [used(NONCE, 1), transfer(PAYEE, 10_000n, 2), transfer(PAYEE, 500_000n, 3)],
    ];
    for (const logs of cases) assert.equal(authorizationTransferLog(logs, TOKEN, signed), undefined);
  });
});

/**
 * verifyUptoSettlement on transactions built with the x402 upto proxy's own ABI: the amount of a settle or
 * settleWithPermit call that carries exactly the signed Permit2 witness transfer and moved that amount; each
 * way a transaction can fail to be that settlement is refused with its reason.
 */
import assert from 'node:assert/strict';
import { encodeAbiParameters, encodeEventTopics, encodeFunctionData, erc20Abi, type Hex } from 'viem';
import { x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import {
  verifyUptoSettlement,
  type SettlementTransaction,
  type SignedUptoPermit,
} from '../../../src/api/chain/verify-upto-settlement.js';
import { AppError } from '../../../src/api/errors/app-error.js';

const TOKEN: Hex = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const OWNER: Hex = '0x1111111111111111111111111111111111111111';
const PAYEE: Hex = '0x2222222222222222222222222222222222222222';
const FACILITATOR: Hex = '0x3333333333333333333333333333333333333333';
const SIGNATURE = `0x${'ab'.repeat(65)}` as Hex;

const permit: SignedUptoPermit = {
  owner: OWNER,
  token: TOKEN,
  maxRaw: 100_000n,
  nonce: 123456789n,
  deadline: 1_900_000_000n,
  witness: { to: PAYEE, facilitator: FACILITATOR, validAfter: 1_800_000_000n },
  signature: SIGNATURE,
};

function settleArgs(overrides: { amount?: bigint; nonce?: bigint; signature?: Hex; to?: string } = {}) {
  return [
    {
      permitted: { token: TOKEN, amount: permit.maxRaw },
      nonce: overrides.nonce ?? permit.nonce,
      deadline: permit.deadline,
    },
    overrides.amount ?? 40_000n,
    OWNER,
    { to: overrides.to ?? PAYEE, facilitator: FACILITATOR, validAfter: permit.witness.validAfter },
    overrides.signature ?? SIGNATURE,
  ] as const;
}

function transferLog(value: bigint, to: Hex = PAYEE, token: Hex = TOKEN) {
  return {
    address: token,
    topics: encodeEventTopics({ abi: erc20Abi, eventName: 'Transfer', args: { from: OWNER, to } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint256' }], [value]),
  };
}

function tx(
  input: Hex,
  logs = [transferLog(40_000n)],
  extra: Partial<SettlementTransaction> = {},
): SettlementTransaction {
  return { to: x402UptoPermit2ProxyAddress, input, status: 'success', logs, ...extra };
}

const settle = (overrides?: Parameters<typeof settleArgs>[0]) =>
  encodeFunctionData({ abi: x402UptoPermit2ProxyABI, functionName: 'settle', args: settleArgs(overrides) as never });

function refusedWith(reason: string) {
  return (err: unknown) =>
    err instanceof AppError && err.code === 'settlement_not_verified' && err.fields.reason === reason;
}

describe('verifyUptoSettlement', () => {
  it('answers the amount a settle call moved for exactly this authorization', () => {
    assert.equal(verifyUptoSettlement(tx(settle()), permit, x402UptoPermit2ProxyAddress), 40_000n);
  });

  it('reads settleWithPermit (an EIP-2612 permit first) the same way', () => {
    const input = encodeFunctionData({
      abi: x402UptoPermit2ProxyABI,
      functionName: 'settleWithPermit',
      args: [
        { value: 100_000n, deadline: permit.deadline, r: `0x${'11'.repeat(32)}`, s: `0x${'22'.repeat(32)}`, v: 27 },
        ...settleArgs(),
      ] as never,
    });
    assert.equal(verifyUptoSettlement(tx(input), permit, x402UptoPermit2ProxyAddress), 40_000n);
  });

  it('a zero charge needs no transfer', () => {
    assert.equal(verifyUptoSettlement(tx(settle({ amount: 0n }), []), permit, x402UptoPermit2ProxyAddress), 0n);
  });

  it('refuses a reverted transaction', () => {
    assert.throws(
      () => verifyUptoSettlement(tx(settle(), [], { status: 'reverted' }), permit, x402UptoPermit2ProxyAddress),
      refusedWith('reverted'),
    );
  });

  it('refuses a call to another contract, and calldata that is not settle', () => {
    assert.throws(
      () => verifyUptoSettlement(tx(settle(), undefined, { to: TOKEN }), permit, x402UptoPermit2ProxyAddress),
      refusedWith('not_an_upto_settlement'),
    );
    assert.throws(
      () => verifyUptoSettlement(tx(settle(), undefined, { to: null }), permit, x402UptoPermit2ProxyAddress),
      refusedWith('not_an_upto_settlement'),
    );
    assert.throws(
      () => verifyUptoSettlement(tx('0xdeadbeef'), permit, x402UptoPermit2ProxyAddress),
      refusedWith('not_an_upto_settlement'),
    );
  });

  it('refuses another authorization: nonce, signature, payee', () => {
    for (const other of [{ nonce: 1n }, { signature: `0x${'cd'.repeat(65)}` as Hex }, { to: FACILITATOR }]) {
      assert.throws(
        () => verifyUptoSettlement(tx(settle(other)), permit, x402UptoPermit2ProxyAddress),
        refusedWith('authorization_mismatch'),
        JSON.stringify(other, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      );
    }
  });

  it('refuses an amount over the signed maximum', () => {
    assert.throws(
      () =>
        verifyUptoSettlement(
          tx(settle({ amount: 100_001n }), [transferLog(100_001n)]),
          permit,
          x402UptoPermit2ProxyAddress,
        ),
      refusedWith('amount_over_maximum'),
    );
  });

  it('refuses when the token did not move that amount from the owner to the payee', () => {
    for (const logs of [
      [],
      [transferLog(39_999n)],
      [transferLog(40_000n, FACILITATOR)],
      [transferLog(40_000n, PAYEE, FACILITATOR)],
    ]) {
      assert.throws(
        () => verifyUptoSettlement(tx(settle(), logs), permit, x402UptoPermit2ProxyAddress),
        refusedWith('transfer_missing'),
      );
    }
  });
});

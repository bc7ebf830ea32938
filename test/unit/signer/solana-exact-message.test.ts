/**
 * The Solana x402 `exact` check (signer/solana/check-x402-exact-message.ts) on messages built with
 * @solana/kit and the @solana-program helpers, as the official client builds them: the valid shapes pass
 * and return what they pay; each refusal names its one rule; hostile bytes (random, truncated, bit-flipped,
 * oversized) are refused with a rule and never thrown as anything else.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { AccountRole, address, createNoopSigner, getAddressDecoder, type Address, type Instruction } from '@solana/kit';
import { getRequestHeapFrameInstruction, getSetComputeUnitLimitInstruction } from '@solana-program/compute-budget';
import { getApproveInstruction, getTransferInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { DEFAULT_SOLANA_INVARIANTS, solanaInvariants } from '../../../signer/config/solana-invariants.js';
import { checkX402ExactMessage, type ExactPaymentRequest } from '../../../signer/solana/check-x402-exact-message.js';
import { SOLANA_RULES, type SolanaRule } from '../../../signer/solana/solana-rule.js';
import { SignerFault } from '../../../signer/signer-error.js';
import {
  associatedTokenAccount,
  compiledPayment,
  DEVNET,
  DEVNET_USDC,
  encodeCompiled,
  FEE_PAYER,
  MAINNET,
  MAINNET_USDC,
  memoInstruction,
  PAY_TO,
  paymentMessage,
  type PaymentParts,
} from '../../builders/solana-payment-message.js';

const newAddress = (): Address => getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const WALLET = newAddress();
const OTHER = newAddress();
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');

const request = (over: Partial<ExactPaymentRequest> = {}): ExactPaymentRequest => ({
  wallet: WALLET,
  network: DEVNET,
  ...over,
});
/** Devnet USDC (the default) and mainnet USDC, as TREASURY_SIGNER_ALLOWED_TOKENS names it when it is allowed. */
const WITH_MAINNET = solanaInvariants([
  ...DEFAULT_SOLANA_INVARIANTS.allowedMints,
  { network: MAINNET, mint: MAINNET_USDC },
]);
const check = (bytes: Uint8Array, over: Partial<ExactPaymentRequest> = {}) =>
  checkX402ExactMessage(bytes, request(over), WITH_MAINNET);
const payment = (over: Partial<PaymentParts> = {}) => paymentMessage({ wallet: WALLET, ...over });

const tested = new Set<SolanaRule>();
async function refused(
  bytes: Uint8Array | Promise<Uint8Array>,
  rule: SolanaRule,
  over: Partial<ExactPaymentRequest> = {},
) {
  tested.add(rule);
  await assert.rejects(check(await bytes, over), (e: unknown) => {
    assert.ok(e instanceof SignerFault, `not a SignerFault: ${String(e)}`);
    assert.equal(e.code, 'invariant_violation');
    assert.equal(e.details.rule, rule, e.message);
    assert.ok(e.message.startsWith(`${rule}: `));
    return true;
  });
}

/** Refused with some rule, or accepted: never any other error. */
async function neverThrowsOtherwise(bytes: Uint8Array, what: string): Promise<'accepted' | 'refused'> {
  try {
    await check(bytes);
    return 'accepted';
  } catch (e) {
    assert.ok(e instanceof SignerFault && e.code === 'invariant_violation', `${what}: ${String(e)}`);
    assert.ok(SOLANA_RULES.includes(e.details.rule as SolanaRule), `${what}: rule ${e.details.rule}`);
    return 'refused';
  }
}

/** A system transfer of the wallet's SOL (what the signer must never sign). */
const systemTransfer = (from: Address): Instruction => ({
  programAddress: SYSTEM_PROGRAM,
  accounts: [
    { address: from, role: AccountRole.WRITABLE_SIGNER },
    { address: OTHER, role: AccountRole.WRITABLE },
  ],
  data: new Uint8Array([2, 0, 0, 0, 0, 0xe1, 0xf5, 0x05, 0, 0, 0, 0]),
});

describe('Solana x402 exact message check', () => {
  it('accepts the official client shape (v0 and legacy) and returns what it pays', async () => {
    const source = await associatedTokenAccount(WALLET);
    const destination = await associatedTokenAccount(PAY_TO);
    for (const version of [0, 'legacy'] as const) {
      const transfer = await check(await payment({ version }), { payTo: PAY_TO });
      assert.deepEqual(transfer, {
        mint: DEVNET_USDC,
        source,
        destination,
        destinationOwner: PAY_TO,
        amount: 10_000n,
        decimals: 6,
        feePayer: FEE_PAYER,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      });
    }
  });
  it('accepts without price, limit or memo, Token-2022, mainnet, and at the exact bounds', async () => {
    await check(await payment({ computeUnits: undefined, microLamports: undefined, memo: undefined }));
    const t22 = await check(await payment({ tokenProgram: TOKEN_2022_PROGRAM_ADDRESS }));
    assert.equal(t22.tokenProgram, TOKEN_2022_PROGRAM_ADDRESS);
    assert.equal((await check(await payment({ mint: MAINNET_USDC }), { network: MAINNET })).mint, MAINNET_USDC);
    await check(await payment({ computeUnits: 200_000, microLamports: 5_000_000n, memo: 'é'.repeat(128) }));
    const noPayTo = await check(await payment({ payTo: OTHER }));
    assert.equal(noPayTo.destinationOwner, undefined);
  });

  it('message_undecodable: empty, random, truncated, an unknown version', async () => {
    const good = await payment();
    await refused(new Uint8Array(0), 'message_undecodable');
    await refused(good.subarray(0, 40), 'message_undecodable');
    const v1 = good.slice();
    v1[0] = 0x81;
    await refused(v1, 'message_undecodable');
  });
  it('message_not_canonical: trailing bytes, a missing last byte', async () => {
    const good = await payment();
    await refused(new Uint8Array([...good, 0]), 'message_not_canonical');
    await refused(good.subarray(0, good.length - 1), 'message_not_canonical');
  });
  it('address_lookup_table: a v0 message that loads accounts from a table', async () => {
    const m = await compiledPayment({ wallet: WALLET });
    await refused(
      encodeCompiled({
        ...m,
        addressTableLookups: [{ lookupTableAddress: OTHER, writableIndexes: [0], readonlyIndexes: [] }],
      } as typeof m),
      'address_lookup_table',
    );
  });
  it('duplicate_account and account_index_range', async () => {
    const m = await compiledPayment({ wallet: WALLET });
    const accounts = [...m.staticAccounts];
    accounts[accounts.length - 1] = accounts[2]!;
    await refused(encodeCompiled({ ...m, staticAccounts: accounts }), 'duplicate_account');
    const instructions = m.instructions.map((ix, i) => (i === 2 ? { ...ix, accountIndices: [2, 4, 3, 99] } : ix));
    await refused(encodeCompiled({ ...m, instructions }), 'account_index_range');
  });
  it('fee_payer_is_wallet: the wallet would pay the fees', async () => {
    await refused(payment({ feePayer: WALLET }), 'fee_payer_is_wallet');
  });
  it('wallet_not_signer: the message does not need the wallet', async () => {
    await refused(payment({ authority: FEE_PAYER }), 'wallet_not_signer');
  });
  it('unexpected_signer: a third signer', async () => {
    const third: Instruction = {
      ...memoInstruction('x'),
      accounts: [{ address: OTHER, role: AccountRole.READONLY_SIGNER }],
    };
    await refused(payment({ extra: [third] }), 'unexpected_signer');
  });
  it('program_not_allowed: a system transfer of the wallet SOL, a durable nonce, any other program', async () => {
    await refused(payment({ extra: [systemTransfer(WALLET)] }), 'program_not_allowed');
    const advanceNonce: Instruction = {
      programAddress: SYSTEM_PROGRAM,
      accounts: [{ address: OTHER, role: AccountRole.WRITABLE }],
      data: new Uint8Array([4, 0, 0, 0]),
    };
    await refused(payment({ instructions: (t) => [advanceNonce, t] }), 'program_not_allowed');
    const lighthouse: Instruction = {
      programAddress: address('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95'),
      data: new Uint8Array([1]),
    };
    await refused(payment({ extra: [lighthouse] }), 'program_not_allowed');
  });
  it('compute_budget_instruction: a second limit, a heap frame, trailing data, accounts', async () => {
    await refused(payment({ extra: [getSetComputeUnitLimitInstruction({ units: 1 })] }), 'compute_budget_instruction');
    await refused(
      payment({ extra: [getRequestHeapFrameInstruction({ bytes: 64 * 1024 })] }),
      'compute_budget_instruction',
    );
    const limit = getSetComputeUnitLimitInstruction({ units: 1 });
    await refused(
      payment({ instructions: (t) => [{ ...limit, data: new Uint8Array([...limit.data, 0]) }, t] }),
      'compute_budget_instruction',
    );
    await refused(
      payment({ instructions: (t) => [{ ...limit, accounts: [{ address: OTHER, role: AccountRole.READONLY }] }, t] }),
      'compute_budget_instruction',
    );
  });
  it('compute_unit_limit and compute_unit_price above their bounds', async () => {
    await refused(payment({ computeUnits: 200_001 }), 'compute_unit_limit');
    await refused(payment({ microLamports: 5_000_001n }), 'compute_unit_price');
  });
  it('transfer_count: none, or two', async () => {
    const walletSigns: Instruction = {
      ...memoInstruction('no transfer'),
      accounts: [{ address: WALLET, role: AccountRole.READONLY_SIGNER }],
    };
    await refused(payment({ instructions: () => [walletSigns] }), 'transfer_count');
    await refused(payment({ instructions: (t) => [t, t] }), 'transfer_count');
  });
  it('transfer_instruction: Transfer (unchecked), Approve, a multisig TransferChecked, trailing data', async () => {
    const source = await associatedTokenAccount(WALLET);
    const destination = await associatedTokenAccount(PAY_TO);
    const authority = createNoopSigner(WALLET);
    await refused(
      payment({
        instructions: () => [getTransferInstruction({ source, destination, authority, amount: 1n }) as Instruction],
      }),
      'transfer_instruction',
    );
    await refused(
      payment({
        instructions: () => [
          getApproveInstruction({ source, delegate: OTHER, owner: authority, amount: 1n }) as Instruction,
        ],
      }),
      'transfer_instruction',
    );
    await refused(
      payment({
        instructions: (t) => [
          { ...t, accounts: [...t.accounts!, { address: FEE_PAYER, role: AccountRole.READONLY_SIGNER }] },
        ],
      }),
      'transfer_instruction',
    );
    await refused(
      payment({ instructions: (t) => [{ ...t, data: new Uint8Array([...t.data!, 0]) }] }),
      'transfer_instruction',
    );
  });
  it("transfer_authority: the fee payer's tokens, with the wallet signing for something else", async () => {
    await refused(
      payment({
        authority: FEE_PAYER,
        extra: [{ ...memoInstruction('x'), accounts: [{ address: WALLET, role: AccountRole.READONLY_SIGNER }] }],
      }),
      'transfer_authority',
    );
  });
  it('wallet_in_instruction: the wallet as the destination, or in the memo', async () => {
    await refused(payment({ destination: WALLET }), 'wallet_in_instruction');
    await refused(payment({ extra: [memoInstruction('x', [WALLET])] }), 'wallet_in_instruction');
  });
  it('allowed_mint: another mint, or a mint of another network', async () => {
    await refused(payment({ mint: OTHER }), 'allowed_mint');
    await refused(payment(), 'allowed_mint', { network: MAINNET });
    await refused(payment({ mint: MAINNET_USDC }), 'allowed_mint');
    // The default allows devnet USDC only: mainnet USDC on mainnet is refused unless it is named.
    const mainnet = await payment({ mint: MAINNET_USDC });
    await assert.rejects(
      checkX402ExactMessage(mainnet, request({ network: MAINNET }), DEFAULT_SOLANA_INVARIANTS),
      (e: unknown) => e instanceof SignerFault && e.details.rule === 'allowed_mint',
    );
  });
  it('transfer_decimals: anything but 6', async () => {
    await refused(payment({ decimals: 9 }), 'transfer_decimals');
  });
  it("transfer_source: another token account, or the wallet's under the other token program", async () => {
    await refused(payment({ source: await associatedTokenAccount(OTHER) }), 'transfer_source');
    await refused(
      payment({ source: await associatedTokenAccount(WALLET, DEVNET_USDC, TOKEN_2022_PROGRAM_ADDRESS) }),
      'transfer_source',
    );
  });
  it("transfer_destination: not pay_to's associated token account", async () => {
    await refused(payment({ payTo: OTHER }), 'transfer_destination', { payTo: PAY_TO });
  });
  it('memo_instruction: two memos, too long, not UTF-8, with accounts, empty', async () => {
    await refused(payment({ extra: [memoInstruction('second')] }), 'memo_instruction');
    await refused(payment({ memo: 'x'.repeat(257) }), 'memo_instruction');
    await refused(
      payment({ memo: undefined, extra: [memoInstruction(new Uint8Array([0xff, 0xfe]))] }),
      'memo_instruction',
    );
    await refused(payment({ memo: undefined, extra: [memoInstruction('x', [OTHER])] }), 'memo_instruction');
    await refused(payment({ memo: undefined, extra: [memoInstruction('')] }), 'memo_instruction');
  });
  it('has a test for every rule, and the protocol documents every rule', () => {
    const doc = fs.readFileSync(
      path.resolve(import.meta.dirname, '../../../signer/protocol/solana-protocol.ts'),
      'utf8',
    );
    assert.deepEqual(
      SOLANA_RULES.filter((r) => !doc.includes(r)),
      [],
    );
    assert.deepEqual(
      SOLANA_RULES.filter((r) => !tested.has(r)),
      [],
    );
  });

  it('refuses hostile bytes with a rule, never another error', async function () {
    this.timeout(120_000);
    const good = await payment();
    let accepted = 0;
    for (let cut = 0; cut < good.length; cut++) {
      assert.equal(await neverThrowsOtherwise(good.subarray(0, cut), `cut ${cut}`), 'refused');
    }
    for (let i = 0; i < good.length; i++) {
      const flipped = good.slice();
      flipped[i]! ^= 1 << (i % 8);
      if ((await neverThrowsOtherwise(flipped, `flip ${i}`)) === 'accepted') accepted++;
    }
    // Flips of the blockhash and amount bytes still make a valid payment; most others do not.
    assert.ok(accepted < good.length / 2, `${accepted} flips accepted`);
    for (let n = 0; n < 500; n++) {
      const bytes = randomBytes(n % 1233);
      assert.equal(await neverThrowsOtherwise(bytes, `random ${n}`), 'refused');
    }
    for (const size of [1233, 64 * 1024, 1024 * 1024]) {
      assert.equal(await neverThrowsOtherwise(new Uint8Array(size).fill(0xff), `huge ${size}`), 'refused');
      assert.equal(
        await neverThrowsOtherwise(new Uint8Array([...good, ...new Uint8Array(size)]), `padded ${size}`),
        'refused',
      );
    }
  });
});

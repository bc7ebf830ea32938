/**
 * The SDK reads a Solana message as an x402 `exact` payment only when it is exactly that shape
 * (src/sdk/svm-exact-transfer.ts `readSvmExactMessage`, which the CLI's keystore signer and the buyer's check
 * of a transaction before it is sent rely on) — the same shape rule as Treasury's signer
 * (signer/solana/check-x402-exact-message.ts), which the SDK mirrors because it may not import the signer.
 * Messages built with @solana/kit and the @solana-program helpers (test/builders/solana-payment-message.ts):
 * - the official client's shapes (v0 and legacy, with or without compute budget and memo, Token-2022, a
 *   256-byte memo) are read, with what they pay;
 * - each message that does more than the one transfer, or is not in the shape, is refused by both: an SPL
 *   Approve or a System transfer beside the payment, a durable nonce, another program, a third signer, a
 *   second or odd compute-budget instruction, no or two token instructions, a Transfer or Approve instead of
 *   TransferChecked, the payer in another account slot, two memos or a memo with accounts, empty, too long or
 *   not UTF-8, trailing bytes, lookup tables, an account listed twice;
 * - a transfer from another account than the payer's associated token account, or stating other decimals
 *   than 6, is refused by `readSvmExactPayment` (the keystore signer's reader) and by the signer
 *   (`transfer_source`, `transfer_decimals`); `readSvmExactMessage` reads the shape only.
 */
import assert from 'node:assert/strict';
import { ed25519 } from '@noble/curves/ed25519.js';
import { AccountRole, address, createNoopSigner, getAddressDecoder, type Address, type Instruction } from '@solana/kit';
import { getRequestHeapFrameInstruction, getSetComputeUnitLimitInstruction } from '@solana-program/compute-budget';
import { getApproveInstruction, getTransferInstruction, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { TOKEN_2022_PROGRAM_ADDRESS } from '@solana-program/token-2022';
import { DEFAULT_SOLANA_INVARIANTS } from '../../../signer/config/solana-invariants.js';
import { checkX402ExactMessage } from '../../../signer/solana/check-x402-exact-message.js';
import { readSvmExactMessage } from '../../../src/sdk/index.js';
import { readSvmExactPayment } from '../../../src/sdk/svm-exact-transfer.js';
import {
  associatedTokenAccount,
  compiledPayment,
  DEVNET,
  DEVNET_USDC,
  encodeCompiled,
  FEE_PAYER,
  memoInstruction,
  PAY_TO,
  paymentMessage,
  type PaymentParts,
} from '../../builders/solana-payment-message.js';

const newAddress = (): Address => getAddressDecoder().decode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()));
const WALLET = newAddress();
const OTHER = newAddress();
const SYSTEM_PROGRAM = address('11111111111111111111111111111111');
const U64_MAX = 2n ** 64n - 1n;

const payment = (over: Partial<PaymentParts> = {}) => paymentMessage({ wallet: WALLET, ...over });

/** Refused by the SDK's payment reader (and, for the shape, its message reader) and by Treasury's signer alike. */
async function refusedByBoth(
  what: string,
  bytes: Uint8Array | Promise<Uint8Array>,
  rule: 'shape' | 'transfer' = 'shape',
): Promise<void> {
  const message = await bytes;
  if (rule === 'shape') assert.throws(() => readSvmExactMessage(message), Error, `the SDK reads ${what}`);
  await assert.rejects(readSvmExactPayment(message), Error, `the SDK's payment reader reads ${what}`);
  await assert.rejects(
    checkX402ExactMessage(message, { wallet: WALLET, network: DEVNET }, DEFAULT_SOLANA_INVARIANTS),
    (e: unknown) => (e as { code?: string }).code === 'invariant_violation',
    `the signer signs ${what}`,
  );
}

const systemTransfer: Instruction = {
  programAddress: SYSTEM_PROGRAM,
  accounts: [
    { address: WALLET, role: AccountRole.WRITABLE_SIGNER },
    { address: OTHER, role: AccountRole.WRITABLE },
  ],
  data: new Uint8Array([2, 0, 0, 0, 0, 0xe1, 0xf5, 0x05, 0, 0, 0, 0]),
};

describe('readSvmExactMessage: the x402 exact shape and nothing else (as Treasury signer reads it)', () => {
  it("reads the official client's shapes, with what they pay", async () => {
    const source = await associatedTokenAccount(WALLET);
    const destination = await associatedTokenAccount(PAY_TO);
    for (const version of [0, 'legacy'] as const) {
      assert.deepEqual(readSvmExactMessage(await payment({ version })), {
        feePayer: FEE_PAYER,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
        source,
        mint: DEVNET_USDC,
        destination,
        authority: WALLET,
        amount: '10000',
        decimals: 6,
        memo: '0123456789abcdef0123456789abcdef',
        authoritySigned: false,
      });
    }
    const bare = readSvmExactMessage(
      await payment({ computeUnits: undefined, microLamports: undefined, memo: undefined }),
    );
    assert.equal(bare.memo, undefined);
    assert.equal(
      readSvmExactMessage(await payment({ tokenProgram: TOKEN_2022_PROGRAM_ADDRESS })).tokenProgram,
      TOKEN_2022_PROGRAM_ADDRESS,
    );
    assert.equal(readSvmExactMessage(await payment({ memo: 'é'.repeat(128) })).memo, 'é'.repeat(128));
    for (const over of [{}, { tokenProgram: TOKEN_2022_PROGRAM_ADDRESS }, { version: 'legacy' as const }])
      assert.equal((await readSvmExactPayment(await payment(over))).authority, WALLET, JSON.stringify(over));
  });

  it("refuses a transfer from another account than the payer's associated token account, or with other decimals", async () => {
    await refusedByBoth('another source account', payment({ source: OTHER }), 'transfer');
    await refusedByBoth(
      "the payer's ATA under the other token program",
      payment({ source: await associatedTokenAccount(WALLET, DEVNET_USDC, TOKEN_2022_PROGRAM_ADDRESS) }),
      'transfer',
    );
    await refusedByBoth('9 decimals', payment({ decimals: 9 }), 'transfer');
    await refusedByBoth('0 decimals', payment({ decimals: 0 }), 'transfer');
  });

  it('refuses a payment that also approves a delegate over the payer’s account, or moves its SOL', async () => {
    const source = await associatedTokenAccount(WALLET);
    const approve = getApproveInstruction({
      source,
      delegate: OTHER,
      owner: createNoopSigner(WALLET),
      amount: U64_MAX,
    });
    await refusedByBoth('a TransferChecked + Approve u64::MAX', payment({ extra: [approve as Instruction] }));
    await refusedByBoth('a TransferChecked + a System transfer', payment({ extra: [systemTransfer] }));
  });

  it('refuses a durable nonce, another program, a third signer', async () => {
    const advanceNonce: Instruction = {
      programAddress: SYSTEM_PROGRAM,
      accounts: [{ address: OTHER, role: AccountRole.WRITABLE }],
      data: new Uint8Array([4, 0, 0, 0]),
    };
    await refusedByBoth('an AdvanceNonce', payment({ instructions: (t) => [advanceNonce, t] }));
    const other: Instruction = {
      programAddress: address('L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95'),
      data: new Uint8Array([1]),
    };
    await refusedByBoth('another program', payment({ extra: [other] }));
    const third: Instruction = {
      ...memoInstruction('x'),
      accounts: [{ address: OTHER, role: AccountRole.READONLY_SIGNER }],
    };
    await refusedByBoth('a third signer', payment({ memo: undefined, extra: [third] }));
    await refusedByBoth('a payer that is not a signer', payment({ authority: FEE_PAYER }));
  });

  it('refuses a second unit limit, a heap frame, compute-budget data or accounts beyond the setting', async () => {
    await refusedByBoth('a second limit', payment({ extra: [getSetComputeUnitLimitInstruction({ units: 1 })] }));
    await refusedByBoth('a heap frame', payment({ extra: [getRequestHeapFrameInstruction({ bytes: 64 * 1024 })] }));
    const limit = getSetComputeUnitLimitInstruction({ units: 1 });
    await refusedByBoth(
      'a limit with trailing data',
      payment({ instructions: (t) => [{ ...limit, data: new Uint8Array([...limit.data, 0]) }, t] }),
    );
    await refusedByBoth(
      'a limit with accounts',
      payment({ instructions: (t) => [{ ...limit, accounts: [{ address: OTHER, role: AccountRole.READONLY }] }, t] }),
    );
  });

  it('refuses no or two token instructions, a Transfer or an Approve alone, a multisig or padded TransferChecked', async () => {
    const source = await associatedTokenAccount(WALLET);
    const destination = await associatedTokenAccount(PAY_TO);
    const authority = createNoopSigner(WALLET);
    const walletSigns: Instruction = {
      ...memoInstruction('no transfer'),
      accounts: [{ address: WALLET, role: AccountRole.READONLY_SIGNER }],
    };
    await refusedByBoth('no transfer', payment({ instructions: () => [walletSigns] }));
    await refusedByBoth('two transfers', payment({ instructions: (t) => [t, t] }));
    const transfer = getTransferInstruction({ source, destination, authority, amount: 1n }) as Instruction;
    await refusedByBoth('a Transfer', payment({ instructions: () => [transfer] }));
    const approve = getApproveInstruction({ source, delegate: OTHER, owner: authority, amount: 1n }) as Instruction;
    await refusedByBoth('an Approve', payment({ instructions: () => [approve] }));
    await refusedByBoth(
      'a multisig TransferChecked',
      payment({
        instructions: (t) => [
          { ...t, accounts: [...t.accounts!, { address: FEE_PAYER, role: AccountRole.READONLY_SIGNER }] },
        ],
      }),
    );
    await refusedByBoth(
      'a padded TransferChecked',
      payment({ instructions: (t) => [{ ...t, data: new Uint8Array([...t.data!, 0]) }] }),
    );
  });

  it('refuses the payer in another account slot, and two, empty, long, non-UTF-8 or account-bearing memos', async () => {
    await refusedByBoth('the payer as destination', payment({ destination: WALLET }));
    await refusedByBoth('the payer in the memo', payment({ memo: undefined, extra: [memoInstruction('x', [WALLET])] }));
    await refusedByBoth('two memos', payment({ extra: [memoInstruction('second')] }));
    await refusedByBoth('a 257-byte memo', payment({ memo: 'x'.repeat(257) }));
    await refusedByBoth(
      'a non-UTF-8 memo',
      payment({ memo: undefined, extra: [memoInstruction(new Uint8Array([0xff, 0xfe]))] }),
    );
    await refusedByBoth('a memo with accounts', payment({ memo: undefined, extra: [memoInstruction('x', [OTHER])] }));
    await refusedByBoth('an empty memo', payment({ memo: undefined, extra: [memoInstruction('')] }));
  });

  it('refuses bytes not in the canonical encoding, lookup tables, an account listed twice', async () => {
    const good = await payment();
    await refusedByBoth('trailing bytes', new Uint8Array([...good, 0]));
    const m = await compiledPayment({ wallet: WALLET });
    const lookups = [{ lookupTableAddress: OTHER, writableIndexes: [0], readonlyIndexes: [] }];
    await refusedByBoth('a lookup table', encodeCompiled({ ...m, addressTableLookups: lookups } as typeof m));
    const accounts = [...m.staticAccounts];
    accounts[accounts.length - 1] = accounts[2]!;
    await refusedByBoth('an account listed twice', encodeCompiled({ ...m, staticAccounts: accounts }));
  });
});

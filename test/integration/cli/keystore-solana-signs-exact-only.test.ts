/**
 * The self-custody keystore's Solana signer (src/cli/commands/account/self-custody-solana.ts
 * `keystoreSolanaSigner`: a real sealed keystore of the "abandon … about" phrase) signs an x402 `exact`
 * payment and nothing more:
 * - through `createX402Buyer({ solanaSigner })` and the official `@x402/svm` client it pays an official
 *   `@x402/express` seller on the offline chain (ops/solana/local-solana.ts): exactly the price moves;
 * - a message holding that same USDC payment plus an SPL Approve of u64::MAX over the key's token account, a
 *   System transfer of its SOL, a second memo or a third signer, or that pays from another token account than
 *   the key's own or states other decimals than 6, is `unsupported_signature`, nothing signed (the message is
 *   read as Treasury's signer reads it: src/sdk/svm-exact-transfer.ts `readSvmExactPayment`).
 */
import assert from 'node:assert/strict';
import { AccountRole, address, createNoopSigner, type Address, type Instruction } from '@solana/kit';
import { getApproveInstruction } from '@solana-program/token';
import { pino } from 'pino';
import { startLocalSolana, type LocalSolana } from '../../../ops/solana/local-solana.js';
import { keystoreSolanaSigner } from '../../../src/cli/commands/account/self-custody-solana.js';
import { sealMnemonic, type Keystore } from '../../../src/cli/commands/account/seed-keystore.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { createX402Buyer } from '../../../src/sdk/index.js';
import {
  associatedTokenAccount,
  FEE_PAYER,
  memoInstruction,
  paymentMessage,
  type PaymentParts,
} from '../../builders/solana-payment-message.js';
import {
  PRICE_UNITS,
  SOLANA_DEVNET,
  startSolanaSeller,
  usdcOf,
  type SolanaSeller,
} from '../../unit/sdk/solana-buyer-fixtures.js';

const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
/** The phrase's Solana address at m/44'/501'/0'/0'. */
const SOLANA_ADDRESS = address('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
const PASSPHRASE = 'correct horse battery';
const OTHER = address('9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin');

describe("the keystore's Solana signer signs an x402 exact payment and nothing more", function () {
  this.timeout(120_000);
  let solana: LocalSolana;
  let seller: SolanaSeller;
  let keystore: Keystore;
  const scryptCost = process.env.XX_KEYSTORE_SCRYPT_LOG_N;

  before(async () => {
    process.env.XX_KEYSTORE_SCRYPT_LOG_N = '10'; // a test keystore: quick to open
    keystore = await sealMnemonic(PHRASE, PASSPHRASE, 'default', { solana: SOLANA_ADDRESS });
    solana = await startLocalSolana({ logger: pino({ level: 'silent' }) });
    seller = await startSolanaSeller(solana);
    await solana.faucet.fundUsdc(SOLANA_ADDRESS, 1_000_000n);
  });
  after(async () => {
    if (scryptCost === undefined) delete process.env.XX_KEYSTORE_SCRYPT_LOG_N;
    else process.env.XX_KEYSTORE_SCRYPT_LOG_N = scryptCost;
    await seller?.close();
    await solana?.stop();
  });

  it('pays an official seller through createX402Buyer and the official client: exactly the price moves', async () => {
    const [buyerBefore, payToBefore] = [await usdcOf(solana, SOLANA_ADDRESS), await usdcOf(solana, seller.payTo)];
    const buyer = createX402Buyer({
      solanaSigner: keystoreSolanaSigner(keystore, PASSPHRASE, solana.mint),
      solanaRpcUrl: solana.rpcUrl,
      assets: { [SOLANA_DEVNET]: solana.mint },
      maxPriceUsd: '0.05',
    });
    const result = await buyer.request(`${seller.url}/solana`);
    assert.deepEqual([result.status, result.paid, result.receipt?.payer], [200, true, SOLANA_ADDRESS], result.body);
    assert.equal(await usdcOf(solana, SOLANA_ADDRESS), buyerBefore - PRICE_UNITS);
    assert.equal(await usdcOf(solana, seller.payTo), payToBefore + PRICE_UNITS);
  });

  it('refuses the USDC payment plus an Approve of u64::MAX, a System transfer, a second memo or a third signer, from another account or with other decimals', async () => {
    const signer = keystoreSolanaSigner(keystore, PASSPHRASE, solana.mint);
    const source = await associatedTokenAccount(SOLANA_ADDRESS, solana.mint);
    const approve = getApproveInstruction({
      source,
      delegate: OTHER,
      owner: createNoopSigner(SOLANA_ADDRESS),
      amount: 2n ** 64n - 1n,
    }) as Instruction;
    const systemTransfer: Instruction = {
      programAddress: address('11111111111111111111111111111111'),
      accounts: [
        { address: SOLANA_ADDRESS, role: AccountRole.WRITABLE_SIGNER },
        { address: OTHER, role: AccountRole.WRITABLE },
      ],
      data: new Uint8Array([2, 0, 0, 0, 0, 0xe1, 0xf5, 0x05, 0, 0, 0, 0]),
    };
    const thirdSigner: Instruction = {
      ...memoInstruction('x'),
      accounts: [{ address: OTHER, role: AccountRole.READONLY_SIGNER }],
    };
    const cases: Array<[string, Partial<PaymentParts>]> = [
      ['an SPL Approve of u64::MAX', { extra: [approve] }],
      ['a System transfer of its SOL', { extra: [systemTransfer] }],
      ['a second memo', { extra: [memoInstruction('second')] }],
      ['a third signer', { memo: undefined, extra: [thirdSigner] }],
      ['a transfer from another token account', { source: OTHER }],
      ['a transfer stating 9 decimals', { decimals: 9 }],
    ];
    const plain = await paymentMessage({ wallet: SOLANA_ADDRESS, mint: solana.mint });
    const sign = (messageBytes: Uint8Array, signers: Address[] = [FEE_PAYER, SOLANA_ADDRESS]) =>
      signer.signTransactions([
        { messageBytes, signatures: Object.fromEntries(signers.map((a) => [a, null])) } as never,
      ]);
    const [signed] = await sign(plain);
    assert.ok(signed?.[SOLANA_ADDRESS], 'the plain payment is signed');
    for (const [what, parts] of cases) {
      const bytes = await paymentMessage({ wallet: SOLANA_ADDRESS, mint: solana.mint, ...parts });
      await assert.rejects(
        sign(bytes, what === 'a third signer' ? [FEE_PAYER, SOLANA_ADDRESS, OTHER] : undefined),
        (err: unknown) => err instanceof CliError && err.code === 'unsupported_signature',
        what,
      );
    }
  });
});

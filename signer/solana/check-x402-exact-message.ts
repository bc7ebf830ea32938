/**
 * Decides whether a Solana transaction message is exactly an x402 `exact` payment by the wallet, and if so
 * what it pays: at most one SetComputeUnitLimit (≤ the configured bound) and one SetComputeUnitPrice (≤ the
 * configured price), exactly one SPL Token or Token-2022 TransferChecked of an allowed mint for the network,
 * 6 decimals, from the wallet's associated token account, with the wallet as its authority, an optional
 * Memo (bounded, UTF-8, no accounts), and nothing else. The fee payer (account 0) is not the wallet; the
 * message has exactly two signers (the fee payer and the wallet); the wallet appears in no instruction
 * except as the transfer's authority. With `payTo`, the destination must be ATA(payTo, mint).
 * Each refusal throws `invariant_violation` with one stable rule (./solana-rule.ts).
 *
 * Defends: the signer becoming a raw-bytes oracle — a compromised front cannot have the wallet sign a
 * transfer of another token or from another account, a close or approve, a system transfer of its SOL,
 * a durable-nonce transaction (System's AdvanceNonce is not allowed: a signed payment expires with its
 * blockhash), a payment of its own fees, or accounts hidden behind lookup tables.
 * Does not defend: the amount against the signer's limits (the caller counts it), nor who is paid when
 * `payTo` is absent (the destination is any token account of the mint).
 */
import type { Address } from '@solana/kit';
import type { SolanaInvariants } from '../config/solana-invariants.js';
import { SOLANA_MINT_DECIMALS } from '../config/solana-invariants.js';
import { associatedTokenAddress } from './associated-token-address.js';
import { decodeSolanaMessage, type SolanaMessage } from './decode-solana-message.js';
import {
  COMPUTE_BUDGET_PROGRAM,
  decodeComputeBudgetData,
  decodeMemoData,
  decodeTransferCheckedData,
  MEMO_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from './solana-instructions.js';
import { solanaRule } from './solana-rule.js';

export interface ExactPaymentRequest {
  /** The wallet's base58 address (its Ed25519 public key). */
  wallet: string;
  /** CAIP-2, `solana:<genesis hash prefix>`. */
  network: string;
  /** The payee; when given, the destination must be its associated token account for the mint. */
  payTo?: string | undefined;
}

export interface ExactTransfer {
  mint: string;
  source: string;
  destination: string;
  /** The payee, when the request named it (and the destination is its associated token account). */
  destinationOwner?: string;
  amount: bigint;
  decimals: number;
  feePayer: string;
  tokenProgram: string;
}

/** An instruction with its program and accounts as addresses (indices checked against the static accounts). */
interface ResolvedInstruction {
  program: Address;
  accounts: Address[];
  data: Uint8Array;
}

function resolveInstructions(message: SolanaMessage): ResolvedInstruction[] {
  const accounts = message.staticAccounts;
  const at = (index: number): Address => {
    const found = accounts[index];
    solanaRule(found !== undefined, 'account_index_range', `account index ${index} is outside the message's accounts`);
    return found;
  };
  return message.instructions.map((ix) => ({
    program: at(ix.programAddressIndex),
    accounts: (ix.accountIndices ?? []).map(at),
    data: (ix.data ?? new Uint8Array(0)) as Uint8Array,
  }));
}

function checkSigners(message: SolanaMessage, wallet: string): void {
  const accounts = message.staticAccounts;
  solanaRule(new Set(accounts).size === accounts.length, 'duplicate_account', 'an account is listed twice');
  solanaRule(accounts[0] !== wallet, 'fee_payer_is_wallet', 'the wallet must not be the fee payer');
  const index = accounts.indexOf(wallet as Address);
  solanaRule(
    index >= 0 && index < message.header.numSignerAccounts,
    'wallet_not_signer',
    'the wallet is not a signer of the message',
  );
  solanaRule(
    message.header.numSignerAccounts === 2,
    'unexpected_signer',
    'the message must have exactly two signers: the fee payer and the wallet',
  );
}

function checkComputeBudget(ixs: ResolvedInstruction[], invariants: SolanaInvariants): void {
  const seen = new Set<string>();
  for (const ix of ixs) {
    const setting = ix.accounts.length === 0 ? decodeComputeBudgetData(ix.data) : undefined;
    solanaRule(
      setting !== undefined && !seen.has(setting.kind),
      'compute_budget_instruction',
      'only one SetComputeUnitLimit and one SetComputeUnitPrice, without accounts, are allowed',
    );
    seen.add(setting.kind);
    if (setting.kind === 'unit_limit') {
      solanaRule(
        setting.units <= invariants.maxComputeUnitLimit,
        'compute_unit_limit',
        `the compute unit limit exceeds ${invariants.maxComputeUnitLimit}`,
      );
    } else {
      solanaRule(
        setting.microLamports <= invariants.maxComputeUnitPriceMicroLamports,
        'compute_unit_price',
        `the compute unit price exceeds ${invariants.maxComputeUnitPriceMicroLamports} micro-lamports`,
      );
    }
  }
}

function checkMemos(ixs: ResolvedInstruction[], invariants: SolanaInvariants): void {
  solanaRule(ixs.length <= 1, 'memo_instruction', 'at most one memo is allowed');
  for (const ix of ixs) {
    solanaRule(
      ix.accounts.length === 0 &&
        ix.data.length >= 1 &&
        ix.data.length <= invariants.maxMemoBytes &&
        decodeMemoData(ix.data) !== undefined,
      'memo_instruction',
      `a memo takes no accounts and 1 to ${invariants.maxMemoBytes} bytes of UTF-8`,
    );
  }
}

/** Groups the instructions by program; any program outside the x402 `exact` shape is refused. */
function groupInstructions(ixs: ResolvedInstruction[]) {
  const groups = {
    budget: [] as ResolvedInstruction[],
    token: [] as ResolvedInstruction[],
    memo: [] as ResolvedInstruction[],
  };
  for (const ix of ixs) {
    if (ix.program === COMPUTE_BUDGET_PROGRAM) groups.budget.push(ix);
    else if (ix.program === TOKEN_PROGRAM || ix.program === TOKEN_2022_PROGRAM) groups.token.push(ix);
    else if (ix.program === MEMO_PROGRAM) groups.memo.push(ix);
    else solanaRule(false, 'program_not_allowed', `program ${ix.program} is not part of an x402 exact payment`);
  }
  return groups;
}

/** The transfer's accounts and amounts; the wallet may appear in no other account slot of any instruction. */
async function checkTransfer(
  transferIx: ResolvedInstruction,
  all: ResolvedInstruction[],
  request: ExactPaymentRequest,
  invariants: SolanaInvariants,
): Promise<Omit<ExactTransfer, 'feePayer'>> {
  const data = decodeTransferCheckedData(transferIx.data);
  solanaRule(
    data !== undefined && transferIx.accounts.length === 4,
    'transfer_instruction',
    'the token instruction must be a TransferChecked with exactly its four accounts',
  );
  const [source, mint, destination, authority] = transferIx.accounts as [Address, Address, Address, Address];
  solanaRule(authority === request.wallet, 'transfer_authority', "the transfer's authority must be the wallet");
  const walletElsewhere = all.some((ix) =>
    ix.accounts.some((a, i) => a === request.wallet && !(ix === transferIx && i === 3)),
  );
  solanaRule(!walletElsewhere, 'wallet_in_instruction', 'the wallet appears in an instruction other than as authority');
  solanaRule(
    invariants.allowedMints.some((m) => m.network === request.network && m.mint === mint),
    'allowed_mint',
    `mint ${mint} is not allowed on ${request.network}`,
  );
  solanaRule(data.decimals === SOLANA_MINT_DECIMALS, 'transfer_decimals', `decimals must be ${SOLANA_MINT_DECIMALS}`);
  const wallet = request.wallet as Address;
  const expectedSource = await associatedTokenAddress(wallet, mint, transferIx.program);
  solanaRule(source === expectedSource, 'transfer_source', "the source must be the wallet's associated token account");
  if (request.payTo !== undefined) {
    const expected = await associatedTokenAddress(request.payTo as Address, mint, transferIx.program);
    solanaRule(
      destination === expected,
      'transfer_destination',
      "the destination must be pay_to's associated token account",
    );
  }
  return {
    mint,
    source,
    destination,
    ...(request.payTo !== undefined ? { destinationOwner: request.payTo } : {}),
    amount: data.amount,
    decimals: data.decimals,
    tokenProgram: transferIx.program,
  };
}

/** Decodes `bytes` and returns the one transfer it makes, if it is exactly an x402 `exact` payment by the wallet. */
export async function checkX402ExactMessage(
  bytes: Uint8Array,
  request: ExactPaymentRequest,
  invariants: SolanaInvariants,
): Promise<ExactTransfer> {
  const message = decodeSolanaMessage(bytes);
  checkSigners(message, request.wallet);
  const ixs = resolveInstructions(message);
  const groups = groupInstructions(ixs);
  checkComputeBudget(groups.budget, invariants);
  solanaRule(groups.token.length === 1, 'transfer_count', 'exactly one token transfer is allowed');
  const transfer = await checkTransfer(groups.token[0]!, ixs, request, invariants);
  checkMemos(groups.memo, invariants);
  return { ...transfer, feePayer: message.staticAccounts[0]! };
}

/**
 * GET /v1/wallets/{id}/policy/receipt?nonce=… (docs/adr/0012-owner-signed-policies.md): the signer's receipt of what
 * it holds for the wallet (`attest_wallet_policy`, signer/owner-policy/policy-receipts.ts) — a statement the signer
 * builds and signs with the wallet's own key around the owner's nonce — relayed untouched. The API names the wallet's
 * address and key references; the signer checks them (another wallet's key does not recover to the address).
 *
 * Defends: nothing of the API's own making reaching the owner as the signer's word — the API passes the statement and
 * signature through as the signer returned them (`xx wallet policy verify` checks both against the address the owner
 * knows and the nonce it chose: src/cli/commands/account/wallet-policy-verify.ts), an EVM wallet's as an EIP-191
 * personal message (`eip191`), a Solana wallet's as a Solana off-chain message (`solana_offchain`, its bytes rebuilt
 * from the statement and the address: signer/solana/policy-receipt-message.ts); a nonce in any other spelling than
 * 64 lower-case hex digits (400). Does not defend: an API that does not answer at all (the owner sees no receipt,
 * which is itself the warning). A signer that signs no receipt for the wallet's key answers 409
 * `policy_receipt_unavailable` (rule `key_curve` from a signer older than its Solana receipts).
 */
import { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import type { AccountService } from '../platform/account-service.js';
import type { SignerGateway } from '../signing/signer-gateway.js';
import type { WalletRow } from './store/wallet-store.js';

/** The query of GET /v1/wallets/{id}/policy/receipt: 32 random bytes the owner chose, as 64 lower-case hex digits. */
export const policyReceiptQuerySchema = z
  .object({ nonce: z.string().regex(/^[0-9a-f]{64}$/, 'expected 32 bytes as 64 lower-case hex digits') })
  .strict();

const walletIdSchema = z.string().regex(/^wal_[0-9a-f]{24}$/);
const statementSchema = z.string().min(1).max(1024);

/** The receipt as the signer signed it (the statement's lines: signer/owner-policy/policy-receipt-statement.ts). */
export const policyReceiptSchema = z.discriminatedUnion('scheme', [
  z
    .object({
      wallet_id: walletIdSchema,
      /** EIP-191 personal_sign of `statement` by an EVM wallet's key. */
      scheme: z.literal('eip191'),
      statement: statementSchema,
      signature: z.string().regex(/^0x[0-9a-fA-F]{130}$/),
    })
    .strict(),
  z
    .object({
      wallet_id: walletIdSchema,
      /**
       * Ed25519 by a Solana wallet's key of the Solana off-chain message holding `statement` (version 0, UTF-8,
       * Treasury's receipt application domain, the wallet the one signatory: signer/solana/policy-receipt-message.ts).
       */
      scheme: z.literal('solana_offchain'),
      statement: statementSchema,
      /** The 64-byte signature in base58. */
      signature: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/),
    })
    .strict(),
]);
export type PolicyReceipt = z.infer<typeof policyReceiptSchema>;

export interface PolicyReceiptDeps {
  signer: Pick<SignerGateway, 'call'>;
  accounts: Pick<AccountService, 'get'>;
}

/** The signer's receipt for `wallet` (an active one, read within its account) around `nonce`. */
export async function walletPolicyReceipt(
  deps: PolicyReceiptDeps,
  wallet: WalletRow,
  nonce: string,
): Promise<PolicyReceipt> {
  if (wallet.wallet_key_ref === null) throw unavailable('no_wallet_key');
  const account = await deps.accounts.get(wallet.account_id);
  const wallet_key = { account_key_ref: account.account_key_ref, wallet_key_ref: wallet.wallet_key_ref };
  try {
    const receipt = await deps.signer.call(
      'attest_wallet_policy',
      { address: wallet.address, wallet_key, nonce },
      wallet.account_id,
    );
    return { wallet_id: wallet.id, scheme: receipt.scheme, statement: receipt.statement, signature: receipt.signature };
  } catch (err) {
    // The gateway's answers for a set_wallet_policy; for a receipt they say the signer gives none for this wallet.
    if (err instanceof AppError && err.code === 'policy_signature_invalid' && err.fields.rule === 'unknown_wallet')
      throw unavailable('unknown_wallet', err);
    if (err instanceof AppError && err.code === 'signer_refused' && err.fields.rule === 'key_curve')
      throw unavailable('key_curve', err);
    throw err;
  }
}

function unavailable(rule: 'key_curve' | 'no_wallet_key' | 'unknown_wallet', cause?: unknown): AppError {
  return new AppError('policy_receipt_unavailable', { fields: { rule }, cause });
}

/**
 * The buyer SDK (`treasury/sdk`): a Treasury API client, an x402 buyer that pays with a Treasury-managed
 * wallet (Base or Solana) or with keys the caller holds (a viem account, a kit Solana signer: self-custody),
 * and the Treasury wallet as a viem account. Errors extend `TreasurySdkError` and carry stable codes
 * (docs/buyer-sdk.md).
 */
export { TreasuryClient } from './treasury-client.js';
export {
  balanceSchema,
  payInputSchema,
  isSolanaPayReply,
  payReplySchema,
  signedSolanaPaymentSchema,
  settlementSchema,
  signedPaymentSchema,
  transferInputSchema,
  treasuryClientOptionsSchema,
  walletViewSchema,
  type AuthorizationTerms,
  type Balance,
  type FetchLike,
  type PayInput,
  type PayReply,
  type SignedSolanaPayment,
  type Settlement,
  type SignedPayment,
  type Permit2Authorization,
  type TransferInput,
  type TreasuryClientOptions,
  type WalletView,
} from './treasury-client-schemas.js';
export { DEFAULT_MAX_CHALLENGE_BYTES, DEFAULT_MAX_RESPONSE_BYTES } from './x402-buyer-options.js';
export {
  createX402Buyer,
  type X402Buyer,
  type X402BuyerClient,
  type X402BuyerOptions,
  type X402RequestInit,
} from './x402-buyer.js';
export {
  settlementTransaction,
  summarizePayment,
  type PaymentSummary,
  type X402Receipt,
  type X402Result,
} from './x402-result.js';
export type { LocalBuyerAccount } from './local-account-payer.js';
export type { EvmSignedTerms, SignedTerms, SvmSignedTerms } from './signed-terms.js';
export { selectAccept, selectAccepts, networkMatches, type SelectAcceptOptions } from './select-accept.js';
export { checkBudget } from './check-budget.js';
export {
  associatedTokenAccount,
  readSvmExactMessage,
  readSvmExactTransfer,
  type SvmExactTransfer,
} from './svm-exact-transfer.js';
export { readX402Challenge, type X402Challenge, type X402Dialect } from './read-x402-challenge.js';
export { mapRecoveryError } from './map-recovery-error.js';
export {
  memoryPurchaseStore,
  paymentIdSchema,
  purchaseKeySchema,
  storedPurchaseSchema,
  type PurchaseStore,
  type StoredPurchase,
} from './purchase-store.js';
export { filePurchaseStore, type FilePurchaseStoreOptions } from './file-purchase-store.js';
export { MAX_LIVE_PURCHASES_PER_ORIGIN } from './purchase-origin-bound.js';
export {
  PurchaseOriginLimitError,
  PurchaseRequestMismatchError,
  PurchaseStoreError,
  PurchaseTermsChangedError,
  SolanaClusterMismatchError,
  SolanaRpcUnreachableError,
} from './purchase-errors.js';
export { treasuryAccount, type TreasuryAccountOptions } from './treasury-account.js';
export {
  TreasurySdkError,
  InvalidArgumentError,
  TreasuryKeyMissingError,
  TreasuryUnreachableError,
  InvalidTreasuryReplyError,
  TreasuryApiError,
  PatCapReachedError,
  ReauthenticateError,
  InsufficientBudgetError,
  Permit2AllowanceRequiredError,
  NoCompatibleAcceptError,
  PaymentRejectedError,
  X402PaymentFailedError,
  InsufficientFundsError,
  InvalidChallengeError,
  ChallengeOriginMismatchError,
  ResponseTooLargeError,
  UnsupportedSignatureError,
  SignatureMismatchError,
  type Recovery,
} from './sdk-errors.js';
export { SellerTimeoutError, DEFAULT_SELLER_TIMEOUT_MS, MAX_SELLER_TIMEOUT_MS } from './seller-deadline.js';

/**
 * The buyer SDK (`treasury/sdk`): a Treasury API client, an x402 buyer that pays with a Treasury-managed
 * wallet, and the same wallet as a viem account. Errors carry stable codes (spec §7 client-side names).
 */
export { TreasuryClient, type TreasuryClientOptions, type WalletView, type Balance, type SignedPayment, type PayInput, type TransferInput, type FetchLike } from './treasury-client.js';
export { createX402Buyer, selectAccept, checkBudget, type X402Buyer, type X402BuyerOptions, type X402RequestInit, type X402Result } from './x402-buyer.js';
export { treasuryAccount, type TreasuryAccountOptions } from './treasury-account.js';
export {
  TreasurySdkError,
  TreasuryKeyMissingError,
  TreasuryApiError,
  PatCapReachedError,
  ReauthenticateError,
  InsufficientBudgetError,
  NoCompatibleAcceptError,
  PaymentRejectedError,
  X402PaymentFailedError,
  InvalidChallengeError,
  type Recovery,
} from './sdk-errors.js';

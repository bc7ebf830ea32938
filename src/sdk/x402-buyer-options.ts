/**
 * What `createX402Buyer` (x402-buyer.ts) accepts from its caller, checked with zod before anything is sent:
 * the buyer's options — a Treasury-managed wallet (`{ client, walletId, … }`) or keys the caller holds (a viem
 * account `{ account, … }`, a kit Solana signer `{ solanaSigner, … }`, or both) — and each request's URL,
 * method and headers.
 *
 * Defends against: a malformed option or argument reaching the wire or a signer (refused with
 * `InvalidArgumentError` naming the field, before any I/O); a URL that is not absolute http(s); a client or
 * account object without the methods the buyer calls.
 * Does not defend against: a client or account whose methods misbehave (the buyer checks what was signed
 * against what was asked, x402-signed-payment.ts).
 */
import type { TransactionPartialSigner } from '@solana/kit';
import { z } from 'zod';
import { isUsdString } from '../../policy/money.js';
import { schemeNameSchema } from '../x402/wire-schemas.js';
import type { LocalBuyerAccount } from './local-account-payer.js';
import { paymentIdSchema, purchaseKeySchema, type PurchaseStore } from './purchase-store.js';
import { InvalidArgumentError } from './sdk-errors.js';
import { sellerTimeoutSchema } from './seller-deadline.js';
import { parseArgument, type TreasuryClient } from './treasury-client.js';
import { capabilitySchema, fetchSchema, objectWithMethods, walletIdSchema } from './treasury-client-schemas.js';

/** What the buyer needs from a Treasury client (a `TreasuryClient`, or anything with the same two methods). */
export type X402BuyerClient = Pick<TreasuryClient, 'pay' | 'getWallet'> &
  Partial<Pick<TreasuryClient, 'recordSettlement' | 'getBalance'>>;

const networkPatternSchema = z
  .string()
  .regex(/^[-a-z0-9]{3,8}:(?:\*|[-_a-zA-Z0-9]{1,32})$/, 'expected a CAIP-2 network or a pattern such as eip155:*');

/** A CAIP-2 network a buyer can pay on: an EVM chain (`eip155:<id>`) or a Solana cluster (`solana:<genesis>`). */
const payableNetworkSchema = z
  .string()
  .regex(
    /^(?:eip155:[1-9][0-9]{0,15}|solana:[1-9A-HJ-NP-Za-km-z]{32})$/,
    'expected an eip155 or solana CAIP-2 network, e.g. eip155:84532',
  );

/**
 * The asset of each network (`assets`): an ERC-20 address on an `eip155` network, a base58 mint on a `solana`
 * one; at most 64 networks.
 */
const assetsSchema = z
  .record(payableNetworkSchema, z.string().max(64))
  .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 64, 'expected 1 to 64 networks')
  .refine(
    (m) =>
      Object.entries(m).every(([network, asset]) =>
        network.startsWith('eip155:') ? /^0x[0-9a-fA-F]{40}$/.test(asset) : /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(asset),
      ),
    'expected an 0x address on eip155 networks and a base58 mint on solana ones',
  );

/** A 402's body (the challenge) is read up to this many bytes unless `maxChallengeBytes` says otherwise. */
export const DEFAULT_MAX_CHALLENGE_BYTES = 4 * 1024 * 1024;
/** Any other answer's body (the content, free or paid) is read up to this many bytes unless `maxResponseBytes` says otherwise. */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** A cap on a body the buyer reads: whole bytes, at most 512 MiB (about the longest string a JavaScript engine holds). */
const byteCapSchema = z
  .number()
  .int()
  .min(1)
  .max(512 * 1024 * 1024);

/** What both kinds of buyer take. */
const commonOptions = {
  /**
   * The one network to pay on: when a 402 offers several, only its entries are candidates (a Treasury wallet on
   * another network then pays nothing: `NoCompatibleAcceptError`). Default: the wallet's own network.
   */
  network: payableNetworkSchema.optional(),
  /** Highest price per request, USD decimal string ("0.05"); no cap when omitted. */
  maxPriceUsd: z
    .string()
    .refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "0.05"')
    .optional(),
  /** Fetch used for the seller (not for Treasury); default the global fetch. */
  fetch: fetchSchema.optional(),
  /**
   * The one asset each network is paid in (CAIP-2 → ERC-20 address, compared case-insensitively, or base58
   * mint, compared exactly): only entries on a network named here, in its asset, are candidates, and a stored
   * payment of another is not sent again. Without it, keys the caller holds pay USDC on the networks the SDK
   * knows (Base, Base Sepolia, Solana mainnet and devnet) and nothing on other networks (name them here; an
   * asset named here has its raw amount read by `maxPriceUsd` as micro-USD: buyer-assets.ts); a Treasury wallet
   * pays what Treasury signs (its USDC).
   */
  assets: assetsSchema.optional(),
  /** CAIP-2 networks or `<namespace>:*` patterns to pay on; default what the payer signs (`eip155:*`, `solana:*`). The wallet's own network is always required too. */
  networks: z.array(networkPatternSchema).min(1).max(64).optional(),
  /** Default `['exact', 'upto']` for a Treasury wallet (the schemes Treasury signs), `['exact']` for a local account. */
  schemes: z.array(schemeNameSchema).min(1).max(16).optional(),
  /**
   * Where purchases are kept between attempts (their x402 `payment-identifier` and signed payment, by purchase
   * key: x402-purchase.ts); default a store in this process's memory. Pass a file store
   * (`filePurchaseStore`) or your own for purchases that outlive the process.
   */
  purchases: objectWithMethods<PurchaseStore>(
    ['get', 'put', 'delete'],
    'expected a store with get, put and delete',
  ).optional(),
  /**
   * The most of a 402 answer's body the buyer reads, in bytes (default 4 MiB): past it the exchange fails with
   * `ResponseTooLargeError` and the rest is not read.
   */
  maxChallengeBytes: byteCapSchema.optional(),
  /**
   * The most of any other answer's body the buyer reads — the content, free or paid — in bytes (default 32 MiB):
   * past it `ResponseTooLargeError` (for a paid answer `payment_sent: true`, the purchase kept in its store).
   */
  maxResponseBytes: byteCapSchema.optional(),
  /**
   * How long one exchange with the seller may take in all, in ms (default 120,000; at most 600,000): the unpaid
   * request, the signing and the paid request with its answer read to the end. Past it `SellerTimeoutError`
   * (seller-deadline.ts; with `payment_sent: true` the purchase stays in its store).
   */
  sellerTimeoutMs: sellerTimeoutSchema.optional(),
};

const treasuryBuyerOptionsSchema = z
  .object({
    client: objectWithMethods<X402BuyerClient>(['pay', 'getWallet'], 'expected a TreasuryClient'),
    walletId: walletIdSchema,
    /** Capability sent with each pay (matched against the wallet's capability caps). */
    capability: capabilitySchema.optional(),
    ...commonOptions,
    /**
     * After a payment whose receipt names its transaction, report it to Treasury, which verifies it on chain
     * (default true): for `upto` before answering, giving back the unsettled part of the signed maximum (the
     * result's `settlement`, or `settlementError` why not); for an EVM `exact` payment in the background (the
     * result's `settlementReport`), so the payment shows `settled` in the histories. The seller's answer is
     * returned either way.
     */
    recordSettlements: z.boolean().optional(),
  })
  .strict();

const localBuyerOptionsSchema = z
  .object({
    /** Self-custody on an EVM chain: a viem account (address + signTypedData) that signs the payment itself. */
    account: objectWithMethods<LocalBuyerAccount>(
      ['signTypedData'],
      'expected a viem account with an address and signTypedData',
      (a) => typeof a.address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(a.address),
    ).optional(),
    /** Self-custody on Solana: a kit `TransactionPartialSigner` (e.g. a `KeyPairSigner`) that signs the transaction. */
    solanaSigner: objectWithMethods<TransactionPartialSigner>(
      ['signTransactions'],
      'expected a kit TransactionPartialSigner with a base58 address and signTransactions',
      (a) => typeof a.address === 'string' && /^[1-9A-HJ-NP-Za-km-z]{32,44}$/.test(a.address),
    ).optional(),
    /** JSON-RPC of the EVM network: after a refused payment the account's balance is read, for `InsufficientFundsError`. */
    rpcUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** JSON-RPC of the Solana network: the mint and blockhash the transaction needs, and the balance after a refusal. */
    solanaRpcUrl: z.url({ protocol: /^https?$/ }).optional(),
    ...commonOptions,
  })
  .strict()
  .refine((o) => o.account !== undefined || o.solanaSigner !== undefined, {
    message: 'expected an account (EVM) or a solanaSigner (Solana)',
    path: ['account'],
  });

/**
 * `{ client, walletId, … }` for a Treasury-managed wallet, or `{ account?, solanaSigner?, … }` for keys the
 * caller holds (a viem account, a kit Solana signer, or both: each entry is signed by the one of its network).
 */
export type X402BuyerOptions = z.input<typeof treasuryBuyerOptionsSchema> | z.input<typeof localBuyerOptionsSchema>;

/** The options parsed; `account` names the mode, so an error names the field of that mode's options. */
export function parseBuyerOptions(
  options: X402BuyerOptions,
): z.output<typeof treasuryBuyerOptionsSchema> | z.output<typeof localBuyerOptionsSchema> {
  return typeof options === 'object' && options !== null && ('account' in options || 'solanaSigner' in options)
    ? parseArgument(localBuyerOptionsSchema, options, 'options')
    : parseArgument(treasuryBuyerOptionsSchema, options, 'options');
}

export interface X402RequestInit {
  method?: string;
  headers?: Record<string, string> | Headers | Array<[string, string]>;
  /** Sent as is on both attempts, so it must be replayable (no streams). */
  body?: string | Uint8Array;
  signal?: AbortSignal;
  /**
   * Names the logical purchase this request makes (1 to 256 printable ASCII characters): a retry with the same
   * key, while the purchase lives in the buyer's store, carries the same payment identifier and sends the same
   * signed payment (nothing new is signed). Default: a purchase of this call only.
   */
  purchaseKey?: string;
  /** The purchase's x402 `payment-identifier` (16 to 128 of `[A-Za-z0-9_-]`); default a new `pay_…` id. */
  paymentId?: string;
}

const purchaseRequestSchema = z.object({
  purchaseKey: purchaseKeySchema.optional(),
  paymentId: paymentIdSchema.optional(),
});

/** `init.purchaseKey` and `init.paymentId`, checked. */
export function requestPurchase(init: X402RequestInit): z.output<typeof purchaseRequestSchema> {
  return parseArgument(purchaseRequestSchema, { purchaseKey: init.purchaseKey, paymentId: init.paymentId }, 'init');
}

const methodSchema = z.string().regex(/^[A-Za-z]{1,16}$/, 'expected an HTTP method');

/** `init.method` (default GET), upper-cased. */
export function requestMethod(init: X402RequestInit): string {
  return parseArgument(methodSchema, init.method ?? 'GET', 'init.method').toUpperCase();
}

/** `init.headers` as `Headers`; what `Headers` refuses is an `InvalidArgumentError`. */
export function requestHeaders(init: X402RequestInit): Headers {
  try {
    return new Headers(init.headers);
  } catch (err) {
    throw new InvalidArgumentError('init.headers', err instanceof Error ? err.message : 'not valid HTTP headers');
  }
}

/** The URL as a string, when it is an absolute http(s) URL. */
export function httpUrl(value: string | URL): string {
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new InvalidArgumentError('url', 'expected an absolute http(s) URL');
  return url.toString();
}

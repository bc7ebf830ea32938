/**
 * `createX402Buyer`: runs the x402 exchange for a Treasury-managed wallet (`{ client, walletId }`) or for a
 * local viem account the caller holds (`{ account }`, self-custody) — one code path, in which only the
 * signing step differs (buyer-payer.ts: Treasury's pay endpoint, or the official `@x402/evm` client schemes
 * with the local account, local-account-payer.ts). Send the request; on a 402 read the challenge
 * (read-x402-challenge.ts), pick the first accepts entry this buyer can pay (select-accept.ts), check the
 * price against `maxPriceUsd` (check-budget.ts; for `upto` the signed maximum), have it signed (for a
 * Treasury wallet an `upto` entry the wallet has no Permit2 allowance for is skipped for the next payable
 * entry, else `Permit2AllowanceRequiredError`; the wallet's policy is checked and the spend recorded there),
 * check that what was signed is what was asked, and retry once with the payment in the challenge's dialect
 * (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for the spec's `X-PAYMENT-REQUIRED`). The receipt
 * (`PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`) is decoded with the codecs of src/x402.
 *
 * Defends against: paying more than the caller's cap (integer micro-USD, before anything is signed; never
 * raised silently); paying an option the wallet cannot settle (NoCompatibleAcceptError); sending a signature
 * for other terms than the chosen entry (compared before sending); the payment header following a redirect
 * (the paid retry does not follow redirects); a settled payment whose content was refused going unnoticed
 * (PaymentRejectedError — also when the receipt header is present but unreadable: settlement cannot be
 * ruled out); a second payment for one request (exactly one paid retry, never more); Treasury briefly out of
 * reach while signing (each pay carries an Idempotency-Key of its own, so TreasuryClient retries a 503 or a
 * lost answer as that same payment).
 * Does not defend against: a seller that takes the payment and serves wrong content (the receipt and the
 * on-chain transfer are the evidence); a lost response after settlement followed by the caller's own retry
 * (that pays again); prices in tokens other than 6-decimal USD stablecoins; for a local account, spending
 * rules beyond `maxPriceUsd` (a Treasury wallet's policy and PAT caps do not apply to a key held elsewhere).
 */
import { z } from 'zod';
import { formatUsd, isUsdString } from '../../policy/money.js';
import { decodeSettlementReceipt, encodePaymentPayload, X402_HEADERS } from '../x402/header-codec.js';
import { schemeNameSchema, type PaymentRequirements, type SettlementReceipt } from '../x402/wire-schemas.js';
import { checkBudget } from './check-budget.js';
import { mapRecoveryError } from './map-recovery-error.js';
import { readX402Challenge, tryDecodeChallengeHeader } from './read-x402-challenge.js';
import {
  InsufficientFundsError,
  InvalidArgumentError,
  NoCompatibleAcceptError,
  PaymentRejectedError,
  SignatureMismatchError,
  TreasurySdkError,
  X402PaymentFailedError,
} from './sdk-errors.js';
import { DEFAULT_NETWORKS, DEFAULT_SCHEMES, selectAccepts } from './select-accept.js';

import { parseArgument, type TreasuryClient } from './treasury-client.js';
import { capabilitySchema, walletIdSchema, type FetchLike } from './treasury-client-schemas.js';
import {
  EIP2612_GAS_SPONSORING_KEY,
  treasuryPayer,
  type BuyerPayer,
  type SignedTerms,
  type SignOutcome,
} from './buyer-payer.js';
import { localAccountPayer, type LocalBuyerAccount } from './local-account-payer.js';
import { toX402Receipt, type X402Result } from './x402-result.js';

/** A local account signs `exact` unless asked for more: `upto` needs a Permit2 allowance the account approves on chain. */
const LOCAL_DEFAULT_SCHEMES: readonly string[] = Object.freeze(['exact']);

/** What the buyer needs from a Treasury client (a `TreasuryClient`, or anything with the same two methods). */
export type X402BuyerClient = Pick<TreasuryClient, 'pay' | 'getWallet'> &
  Partial<Pick<TreasuryClient, 'recordSettlement' | 'getBalance'>>;

const networkPatternSchema = z
  .string()
  .regex(/^[-a-z0-9]{3,8}:(?:\*|[-_a-zA-Z0-9]{1,32})$/, 'expected a CAIP-2 network or a pattern such as eip155:*');

/** What both kinds of buyer take. */
const commonOptions = {
  /** Highest price per request, USD decimal string ("0.05"); no cap when omitted. */
  maxPriceUsd: z
    .string()
    .refine(isUsdString, 'expected a USD decimal string with at most 6 decimals, e.g. "0.05"')
    .optional(),
  /** Fetch used for the seller (not for Treasury); default the global fetch. */
  fetch: z.custom<FetchLike>((v) => typeof v === 'function', 'expected a fetch function').optional(),
  /** CAIP-2 networks or `<namespace>:*` patterns to pay on; default `eip155:*`. The wallet's own network is always required too. */
  networks: z.array(networkPatternSchema).min(1).max(64).optional(),
  /** Default `['exact', 'upto']` for a Treasury wallet (the schemes Treasury signs), `['exact']` for a local account. */
  schemes: z.array(schemeNameSchema).min(1).max(16).optional(),
};

const treasuryBuyerOptionsSchema = z
  .object({
    client: z.custom<X402BuyerClient>(
      (c) =>
        typeof c === 'object' &&
        c !== null &&
        typeof (c as X402BuyerClient).pay === 'function' &&
        typeof (c as X402BuyerClient).getWallet === 'function',
      'expected a TreasuryClient',
    ),
    walletId: walletIdSchema,
    /** Capability sent with each pay (matched against the wallet's capability caps). */
    capability: capabilitySchema.optional(),
    ...commonOptions,
    /**
     * After an `upto` payment whose receipt names its transaction, report it to Treasury, which verifies it on
     * chain and gives back the unsettled part of the signed maximum (default true). The result's `settlement`
     * holds what Treasury recorded, or `settlementError` why not; the seller's answer is returned either way.
     */
    recordSettlements: z.boolean().optional(),
  })
  .strict();

const localBuyerOptionsSchema = z
  .object({
    /** Self-custody: a viem account (address + signTypedData) that signs the payment itself. */
    account: z.custom<LocalBuyerAccount>(
      (a) =>
        typeof a === 'object' &&
        a !== null &&
        typeof (a as LocalBuyerAccount).address === 'string' &&
        /^0x[0-9a-fA-F]{40}$/.test((a as LocalBuyerAccount).address) &&
        typeof (a as LocalBuyerAccount).signTypedData === 'function',
      'expected a viem account with an address and signTypedData',
    ),
    /** The CAIP-2 network the account pays on (e.g. `eip155:84532`); entries on other networks are not candidates. */
    network: z
      .string()
      .regex(/^eip155:[1-9][0-9]{0,15}$/, 'expected an eip155 CAIP-2 network')
      .optional(),
    /** JSON-RPC of that network: after a refused payment the account's balance is read, for `InsufficientFundsError`. */
    rpcUrl: z.url({ protocol: /^https?$/ }).optional(),
    ...commonOptions,
  })
  .strict();

/** `{ client, walletId, … }` for a Treasury-managed wallet, or `{ account, … }` for a local viem account. */
export type X402BuyerOptions = z.input<typeof treasuryBuyerOptionsSchema> | z.input<typeof localBuyerOptionsSchema>;

export interface X402RequestInit {
  method?: string;
  headers?: Record<string, string> | Headers | Array<[string, string]>;
  /** Sent as is on both attempts, so it must be replayable (no streams). */
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export interface X402Buyer {
  /** The exchange, with the final response read as text, the receipt and the entry paid. */
  request(url: string | URL, init?: X402RequestInit): Promise<X402Result>;
  /** The same exchange as a drop-in fetch: the final response (body already decoded). The request body is buffered. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

const methodSchema = z.string().regex(/^[A-Za-z]{1,16}$/, 'expected an HTTP method');
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const PAYMENT_HEADERS = [X402_HEADERS.paymentSignature, X402_HEADERS.paymentLegacy];

function httpUrl(value: string | URL): string {
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

/** The signed authorization must be for the entry chosen: scheme, payee, amount, token, network (and for upto the facilitator). */
function assertSignedAsAsked(payment: SignedTerms, requirements: PaymentRequirements): void {
  const problems: string[] = [];
  const same = (x: string, y: unknown) => typeof y === 'string' && x.toLowerCase() === y.toLowerCase();
  if (payment.scheme === 'upto') {
    const a = payment.permit2_authorization;
    if (requirements.scheme !== 'upto') problems.push('scheme');
    if (!same(a.witness.to, requirements.payTo)) problems.push('payee');
    if (a.permitted.amount !== requirements.amount) problems.push('amount');
    if (!same(a.permitted.token, requirements.asset)) problems.push('token');
    if (!same(a.witness.facilitator, requirements.extra?.facilitatorAddress)) problems.push('facilitator');
  } else {
    const a = payment.authorization;
    if (requirements.scheme !== 'exact') problems.push('scheme');
    if (!same(a.to, requirements.payTo)) problems.push('payee');
    if (a.value !== requirements.amount) problems.push('amount');
  }
  if (payment.asset.toLowerCase() !== requirements.asset.toLowerCase()) problems.push('asset');
  if (payment.network !== requirements.network) problems.push('network');
  if (problems.length > 0) throw new SignatureMismatchError(problems.join(', '));
}

/** The seller's reason for refusing a signed payment, bounded. */
/**
 * `extensions.eip2612GasSponsoring` as the official x402 client sends it: the seller's declaration (its
 * `info.description`/`version` and `schema`, echoed — the official server rejects a payload without them)
 * with the signed permit's fields over it. Undefined when no permit was signed.
 */
function eip2612Extension(
  declared: Record<string, unknown> | undefined,
  terms: Extract<SignedTerms, { scheme: 'upto' }>,
): Record<string, unknown> | undefined {
  const permit = terms.eip2612_permit;
  const declaration = declared?.[EIP2612_GAS_SPONSORING_KEY];
  if (!permit || typeof declaration !== 'object' || declaration === null) return undefined;
  const d = declaration as { info?: unknown; schema?: unknown };
  const info = typeof d.info === 'object' && d.info !== null ? (d.info as Record<string, unknown>) : {};
  return {
    [EIP2612_GAS_SPONSORING_KEY]: {
      info: { ...info, ...permit },
      ...(d.schema !== undefined ? { schema: d.schema } : {}),
    },
  };
}

function sellerReason(response: Response, body: string, receipt: SettlementReceipt | undefined): string {
  let reason: string | undefined = receipt && !receipt.success ? receipt.errorReason : undefined;
  reason ??= (
    tryDecodeChallengeHeader(response.headers.get(X402_HEADERS.paymentRequired)) ??
    tryDecodeChallengeHeader(response.headers.get(X402_HEADERS.paymentRequiredLegacy))
  )?.error;
  if (reason === undefined) {
    try {
      const j = JSON.parse(body) as { error?: unknown; error_code?: unknown };
      if (typeof j.error === 'string' && j.error !== '') reason = j.error;
      else if (typeof j.error_code === 'string') reason = j.error_code;
    } catch {
      // not JSON
    }
  }
  return (reason ?? `HTTP ${response.status}`).slice(0, 256);
}

export function createX402Buyer(options: X402BuyerOptions): X402Buyer {
  // `account` names the mode, so an error names the field of that mode's options.
  const o =
    typeof options === 'object' && options !== null && 'account' in options
      ? parseArgument(localBuyerOptionsSchema, options, 'options')
      : parseArgument(treasuryBuyerOptionsSchema, options, 'options');
  const doFetch: FetchLike = o.fetch ?? ((input, init) => fetch(input, init));
  const networks = o.networks ?? DEFAULT_NETWORKS;
  // The only difference between the two modes: who signs (and what else the wallet can answer).
  const local = 'account' in o;
  const payer: BuyerPayer = local
    ? localAccountPayer(o.account, { network: o.network, rpcUrl: o.rpcUrl })
    : treasuryPayer(o.client, o.walletId, o.capability);
  const schemes = o.schemes ?? (local ? LOCAL_DEFAULT_SCHEMES : DEFAULT_SCHEMES);
  const recordSettlements = !local && o.recordSettlements !== false;

  /** Reports an `upto` settlement (recordSettlements); never throws — a failure is the result's `settlementError`. */
  async function recordSettlement(
    authorizationId: string,
    transaction: string,
  ): Promise<Pick<X402Result, 'settlement' | 'settlementError'>> {
    if (!recordSettlements || !payer.recordSettlement || !/^0x[0-9a-fA-F]{64}$/.test(transaction)) return {};
    try {
      return { settlement: await payer.recordSettlement(authorizationId, transaction) };
    } catch (err) {
      return { settlementError: err instanceof TreasurySdkError ? err.code : 'settlement_not_recorded' };
    }
  }

  async function exchange(
    url: string,
    method: string,
    headers: Headers,
    body: string | Uint8Array | undefined,
    signal: AbortSignal | undefined,
  ): Promise<X402Result> {
    const send = (paymentHeader?: [string, string]) => {
      const h = new Headers(headers);
      for (const name of PAYMENT_HEADERS) h.delete(name);
      if (paymentHeader) h.set(...paymentHeader);
      return doFetch(url, {
        method,
        headers: h,
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
        redirect: paymentHeader ? 'manual' : 'follow',
      });
    };

    const first = await send();
    const firstBody = await first.text();
    if (first.status !== 402) return { status: first.status, headers: first.headers, body: firstBody, paid: false };

    const { challenge, dialect } = readX402Challenge(first.headers, firstBody);
    let signed: SignOutcome | undefined;
    let requirements: PaymentRequirements | undefined;
    try {
      const candidates = selectAccepts(challenge.accepts, {
        networks,
        schemes,
        ...(await payer.network().then((n) => (n === undefined ? {} : { walletNetwork: n }))),
      });
      if (candidates.length === 0) throw new NoCompatibleAcceptError(challenge.accepts);
      // The seller's first payable entry; the payer may skip one (an upto entry without the wallet's Permit2 allowance).
      for (const [i, candidate] of candidates.entries()) {
        requirements = candidate;
        checkBudget(candidate, o.maxPriceUsd);
        signed = await payer.sign(candidate, i === candidates.length - 1, challenge.extensions);
        if (signed) break;
      }
    } catch (err) {
      throw mapRecoveryError(err);
    }
    if (!signed || !requirements) throw new NoCompatibleAcceptError(challenge.accepts);
    const { terms, payment } = signed;
    assertSignedAsAsked(terms, requirements);

    const permitExtension = terms.scheme === 'upto' ? eip2612Extension(challenge.extensions, terms) : undefined;
    const header = encodePaymentPayload({
      x402Version: 2,
      resource: challenge.resource,
      accepted: requirements,
      payload:
        terms.scheme === 'upto'
          ? { signature: terms.signature, permit2Authorization: terms.permit2_authorization }
          : { signature: terms.signature, authorization: terms.authorization },
      ...(permitExtension ? { extensions: permitExtension } : {}),
    });
    const second = await send([dialect === 'v2' ? X402_HEADERS.paymentSignature : X402_HEADERS.paymentLegacy, header]);
    const secondBody = await second.text();
    const receiptHeader =
      second.headers.get(X402_HEADERS.paymentResponse) ?? second.headers.get(X402_HEADERS.paymentResponseLegacy);
    let decoded: SettlementReceipt | undefined;
    if (receiptHeader !== null) {
      try {
        decoded = decodeSettlementReceipt(receiptHeader);
      } catch {
        decoded = undefined;
      }
    }
    const receipt = decoded ? toX402Receipt(decoded, requirements) : undefined;
    if (second.status >= 200 && second.status < 300) {
      const result: X402Result = {
        status: second.status,
        headers: second.headers,
        body: secondBody,
        paid: true,
        ...(receipt ? { receipt } : {}),
        requirements,
        ...(payment
          ? { payment }
          : {
              localPayment: {
                ...terms,
                payer: terms.scheme === 'upto' ? terms.permit2_authorization.from : terms.authorization.from,
              },
            }),
      };
      return payment?.scheme === 'upto' && receipt?.success
        ? { ...result, ...(await recordSettlement(payment.authorization_id, receipt.transaction)) }
        : result;
    }
    // A receipt header means the seller says it settled (or it is unreadable, and settlement cannot be ruled out).
    if (receiptHeader !== null && (decoded === undefined || decoded.success))
      throw new PaymentRejectedError(second.status, secondBody, receipt);
    throw await whyNotPaid(
      new X402PaymentFailedError(second.status, sellerReason(second, secondBody, decoded), secondBody),
      requirements,
    );
  }

  /**
   * A payment the seller did not take: when the wallet (read now, fresh, in the price's asset) holds less
   * than the price, `InsufficientFundsError` with recovery `fund_wallet`; otherwise the seller's refusal as it is.
   */
  async function whyNotPaid(
    failure: X402PaymentFailedError,
    requirements: PaymentRequirements,
  ): Promise<TreasurySdkError> {
    if (!payer.balance) return failure;
    try {
      const balance = await payer.balance(requirements);
      if (balance.stale || balance.asset.toLowerCase() !== requirements.asset.toLowerCase()) return failure;
      const have = BigInt(balance.balance_raw);
      const need = BigInt(requirements.amount);
      if (have >= need) return failure;
      return new InsufficientFundsError(failure, balance, { raw: need - have, usd: formatUsd(need - have) });
    } catch {
      return failure;
    }
  }

  return {
    async request(url, init = {}) {
      const method = parseArgument(methodSchema, init.method ?? 'GET', 'init.method').toUpperCase();
      let headers: Headers;
      try {
        headers = new Headers(init.headers);
      } catch (err) {
        throw new InvalidArgumentError('init.headers', err instanceof Error ? err.message : 'not valid HTTP headers');
      }
      return exchange(httpUrl(url), method, headers, init.body, init.signal);
    },

    async fetch(input, init) {
      const request = new Request(input, init);
      httpUrl(request.url);
      const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
      const r = await exchange(request.url, request.method, request.headers, body, request.signal);
      const headers = new Headers(r.headers);
      headers.delete('content-encoding');
      headers.delete('content-length');
      return new Response(NULL_BODY_STATUSES.has(r.status) ? null : r.body, { status: r.status, headers });
    },
  };
}

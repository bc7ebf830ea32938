/**
 * `createX402Buyer`: runs the x402 exchange for a Treasury-managed wallet (`{ client, walletId }`, Base or
 * Solana) or for keys the caller holds (`{ account }` a viem account, `{ solanaSigner }` a kit signer, or
 * both: self-custody) — one code path, in which only the signing step differs (buyer-payer.ts: Treasury's
 * pay endpoint; the official `@x402/evm` client schemes with the local account, local-account-payer.ts; the
 * official `@x402/svm` client scheme with the kit signer, local-solana-payer.ts). Send the request; on a 402
 * read the challenge (read-x402-challenge.ts), pick the first accepts entry this buyer can pay — on the
 * wallet's network, and on `network` when the caller names one, in the asset of `assets` (for local keys
 * without it USDC where the SDK knows the network and nothing elsewhere: select-accept.ts, buyer-assets.ts) — check the
 * price against `maxPriceUsd` (check-budget.ts; for `upto` the signed maximum), have it signed (for a
 * Treasury wallet an `upto` entry the wallet has no Permit2 allowance for is skipped for the next payable
 * entry, else `Permit2AllowanceRequiredError`; the wallet's policy is checked and the spend recorded there),
 * check that what was signed is what was asked, and retry once with the payment in the challenge's dialect
 * (`PAYMENT-SIGNATURE` for v2, `X-PAYMENT` for the spec's `X-PAYMENT-REQUIRED`; x402-signed-payment.ts). The
 * receipt (`PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE`) is decoded with the codecs of src/x402. The options and
 * each request's arguments are checked in x402-buyer-options.ts. Each answer's body is read up to a cap
 * (read-capped-text.ts: `maxChallengeBytes` for a 402, default 4 MiB; `maxResponseBytes` otherwise, default
 * 32 MiB), whichever fetch the caller gave; the whole exchange within `sellerTimeoutMs` (seller-deadline.ts,
 * default 2 minutes: `SellerTimeoutError`).
 *
 * Defends against: paying more than the caller's cap (integer micro-USD, before anything is signed; never
 * raised silently); a local key paying in a token the seller chose instead of USDC (buyer-assets.ts); a Solana
 * entry on another cluster than `solanaRpcUrl` serves (local-solana-payer.ts); paying an option the wallet cannot settle (NoCompatibleAcceptError); sending a signature
 * for other terms than the chosen entry (compared before sending); the payment header following a redirect
 * (the paid retry does not follow redirects); a payment signed for one origin's challenge sent to another — a
 * site redirecting the unpaid request to a real seller, or serving that seller's 402 (challenge-origin.ts:
 * ChallengeOriginMismatchError before anything is signed; the paid retry goes to the URL that answered 402);
 * for a Treasury wallet, a Treasury seller's 402 copied by a page that names itself as the resource (the origin
 * that answered goes with the pay request, and Treasury signs a Treasury seller's payee only for that seller's
 * own origins: `TreasuryApiError` 403 `challenge_origin_not_seller`, nothing signed);
 * a seller filling the purchase store with refused purchases (one refused before signing is forgotten at once) or
 * with signed payments it never takes (at most MAX_LIVE_PURCHASES_PER_ORIGIN live purchases per origin,
 * purchase-origin-bound.ts: PurchaseOriginLimitError before signing); a settled payment whose content was refused
 * going unnoticed (PaymentRejectedError — also when the receipt header is present but unreadable: settlement cannot be
 * ruled out); a second payment for one request (exactly one paid retry, never more); Treasury briefly out of
 * reach while signing (each pay carries the purchase's identifier as its key, so TreasuryClient retries a 503
 * or a lost answer as that same payment); a retried purchase paying twice — each request is a purchase with
 * an x402 `payment-identifier` (`init.purchaseKey` / `init.paymentId` name it across retries), kept in the
 * buyer's purchase store with the payment it signed until the seller takes it or it expires, and sent again
 * rather than signed again — to the same method and URL only (x402-purchase.ts: PurchaseRequestMismatchError); a seller's endless or huge answer filling the buyer's memory
 * (`ResponseTooLargeError` past the cap; a paid answer past it keeps its purchase, so a retry sends the same
 * payment); a seller that never answers holding the caller for ever (`SellerTimeoutError`, the purchase kept
 * likewise); a seller's refusal reason carrying control characters (made one printable line).
 * Does not defend against: a seller that takes the payment and serves wrong content (the receipt and the
 * on-chain transfer are the evidence); a lost response after settlement followed by the caller's own retry
 * under another purchase key (that pays again); a token `assets` names that is not a
 * 6-decimal USD stablecoin (the raw amount is read as micro-USD); for a local account, spending
 * rules beyond `maxPriceUsd` (a Treasury wallet's policy and PAT caps do not apply to a key held elsewhere).
 */
import { X402_HEADERS } from '../x402/header-codec.js';
import type { PaymentRequirements, SettlementReceipt } from '../x402/wire-schemas.js';
import { treasuryPayer, type BuyerPayer, type SignOutcome } from './buyer-payer.js';
import { assetCheck } from './buyer-assets.js';
import { checkBudget } from './check-budget.js';
import { answeredUrl, checkChallengeOrigin } from './challenge-origin.js';
import { jsonOrUndefined } from './json-or-undefined.js';
import { localAccountPayer } from './local-account-payer.js';
import { mapRecoveryError } from './map-recovery-error.js';
import { readX402Challenge, tryDecodeChallengeHeader, type X402Challenge } from './read-x402-challenge.js';
import { NoCompatibleAcceptError, PaymentRejectedError, X402PaymentFailedError } from './sdk-errors.js';
import { DEFAULT_SCHEMES, selectAccepts } from './select-accept.js';
import { eitherPayer } from './either-payer.js';
import { localSolanaPayer } from './local-solana-payer.js';
import type { FetchLike } from './treasury-client-schemas.js';
import { readCappedText } from './read-capped-text.js';
import { DEFAULT_SELLER_TIMEOUT_MS, withSellerDeadline, type ExchangeProgress } from './seller-deadline.js';
import {
  DEFAULT_MAX_CHALLENGE_BYTES,
  DEFAULT_MAX_RESPONSE_BYTES,
  httpUrl,
  parseBuyerOptions,
  requestHeaders,
  requestMethod,
  requestPurchase,
  type X402BuyerOptions,
  type X402RequestInit,
} from './x402-buyer-options.js';
import { paymentHeaderName, signedPaymentHeader } from './x402-signed-payment.js';
import { memoryPurchaseStore, type PurchaseStore } from './purchase-store.js';
import {
  checkPurchaseRequest,
  closePurchase,
  forgetRefusedPurchase,
  openPurchase,
  purchaseRequestHash,
  rememberSigned,
  resumeSigned,
  storedOutcome,
  type OpenPurchase,
  type PurchaseRequest,
} from './x402-purchase.js';
import type { X402Result } from './x402-result.js';
import { paidResult, readReceipt, whyNotPaid, withSettlementReport } from './x402-payment-outcome.js';

export type { X402BuyerClient, X402BuyerOptions, X402RequestInit } from './x402-buyer-options.js';

/** A local account signs `exact` unless asked for more: `upto` needs a Permit2 allowance the account approves on chain. */
const LOCAL_DEFAULT_SCHEMES: readonly string[] = Object.freeze(['exact']);

export interface X402Buyer {
  /** The exchange, with the final response read as text, the receipt and the entry paid. */
  request(url: string | URL, init?: X402RequestInit): Promise<X402Result>;
  /** The same exchange as a drop-in fetch: the final response (body already decoded). The request body is buffered. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const PAYMENT_HEADERS = [X402_HEADERS.paymentSignature, X402_HEADERS.paymentLegacy];

/** The seller's reason for refusing a signed payment, bounded, as one printable line (still the seller's words). */
function sellerReason(response: Response, body: string, receipt: SettlementReceipt | undefined): string {
  let reason: string | undefined = receipt && !receipt.success ? receipt.errorReason : undefined;
  reason ??= (
    tryDecodeChallengeHeader(response.headers.get(X402_HEADERS.paymentRequired)) ??
    tryDecodeChallengeHeader(response.headers.get(X402_HEADERS.paymentRequiredLegacy))
  )?.error;
  if (reason === undefined) {
    const j = jsonOrUndefined(body) as { error?: unknown; error_code?: unknown } | null | undefined;
    if (typeof j?.error === 'string' && j.error !== '') reason = j.error;
    else if (typeof j?.error_code === 'string') reason = j.error_code;
  }
  // One printable line: no control characters (terminal escapes, line breaks) from the seller.
  // eslint-disable-next-line no-control-regex
  return (reason ?? `HTTP ${response.status}`).slice(0, 256).replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** What narrows the candidates: the buyer's network patterns, the one network to pay on when named, the assets. */
interface AcceptFilter {
  networks: readonly string[];
  network: string | undefined;
  schemes: readonly string[];
  maxPriceUsd: string | undefined;
  /** The caller's `assets` option (selectAccepts applies it). */
  assets: Readonly<Record<string, string>> | undefined;
  /** The asset rule with its default (buyer-assets.ts): also what a stored payment must meet to be sent again. */
  assetOk: (requirements: PaymentRequirements) => boolean;
}

/**
 * Signs the seller's first payable entry: the candidates the buyer accepts (networks, schemes, the network
 * named and the wallet's network), each within the budget; the payer may skip one (an upto entry without the
 * wallet's Permit2 allowance). Treasury's refusals come back as the SDK's typed errors. None payable:
 * `NoCompatibleAcceptError` listing what was offered and what this buyer pays on.
 */
async function signFirstPayable(
  payer: BuyerPayer,
  challenge: X402Challenge['challenge'],
  accept: AcceptFilter,
  paymentId: string,
  challengeOrigin: string,
): Promise<{ signed: SignOutcome; requirements: PaymentRequirements }> {
  let walletNetwork: string | undefined;
  try {
    walletNetwork = await payer.network();
    const candidates = selectAccepts(challenge.accepts, {
      networks: accept.networks,
      schemes: accept.schemes,
      ...(walletNetwork === undefined ? {} : { walletNetwork }),
      ...(accept.assets === undefined ? {} : { assets: accept.assets }),
    }).filter((a) => (accept.network === undefined || a.network === accept.network) && accept.assetOk(a));
    for (const [i, requirements] of candidates.entries()) {
      checkBudget(requirements, accept.maxPriceUsd);
      const last = i === candidates.length - 1;
      const signed = await payer.sign(requirements, last, challenge.extensions, paymentId, challengeOrigin);
      if (signed) return { signed, requirements };
    }
  } catch (err) {
    throw mapRecoveryError(err);
  }
  const payable = accept.network ?? walletNetwork;
  throw new NoCompatibleAcceptError(
    challenge.accepts,
    payable === undefined ? accept.networks : [payable],
    challenge.accepts.some((a) => !accept.assetOk(a)),
  );
}

/**
 * The payment of a purchase (x402-purchase.ts): the one it already signed, sent again when the seller still
 * offers its terms (within the budget); else signed now with the purchase's identifier — Treasury told the origin
 * of `paidUrl`, the URL that answered 402 — and kept before it is sent. The header's value, the entry and the
 * outcome.
 */
async function purchasePayment(
  { payer, purchases, filter }: { payer: BuyerPayer; purchases: PurchaseStore; filter: AcceptFilter },
  purchase: OpenPurchase,
  { challenge, dialect }: X402Challenge,
  paidUrl: string,
): Promise<{ header: string; requirements: PaymentRequirements; signed: SignOutcome }> {
  const stored = resumeSigned(purchase, challenge);
  if (stored) {
    // A payment stored for an asset this buyer does not pay in (an older run, another buyer) is not sent.
    if (!filter.assetOk(stored.requirements))
      throw new NoCompatibleAcceptError([stored.requirements], [stored.requirements.network], true);
    checkBudget(stored.requirements, filter.maxPriceUsd);
    return { header: stored.paymentHeader, requirements: stored.requirements, signed: storedOutcome(stored) };
  }
  const challengeOrigin = new URL(paidUrl).origin;
  const { signed, requirements } = await signFirstPayable(
    payer,
    challenge,
    filter,
    purchase.paymentId,
    challengeOrigin,
  );
  const [, header] = await signedPaymentHeader(
    challenge,
    dialect,
    requirements,
    signed.terms,
    signed.payer,
    purchase.paymentId,
  );
  await rememberSigned(purchases, purchase, signed, requirements, header, Date.now());
  return { header, requirements, signed };
}

/** purchasePayment; a purchase refused before anything was signed is forgotten (x402-purchase.ts). */
async function paymentOrForget(
  deps: { payer: BuyerPayer; purchases: PurchaseStore; filter: AcceptFilter },
  purchase: OpenPurchase,
  challenge: X402Challenge,
  paidUrl: string,
): ReturnType<typeof purchasePayment> {
  try {
    return await purchasePayment(deps, purchase, challenge, paidUrl);
  } catch (err) {
    await forgetRefusedPurchase(deps.purchases, purchase, err);
    throw err;
  }
}

/** One request to the seller, as the exchange sends it twice (unpaid, then paid); `signal` is the exchange's deadline. */
interface SellerRequest {
  url: string;
  method: string;
  headers: Headers;
  body: string | Uint8Array | undefined;
  signal: AbortSignal;
}

/** Sends `request` to the seller, with `paymentHeader` (then not following redirects) or without any payment header. */
function sendToSeller(doFetch: FetchLike, request: SellerRequest, paymentHeader?: [string, string]): Promise<Response> {
  const { url, method, headers, body, signal } = request;
  const h = new Headers(headers);
  for (const name of PAYMENT_HEADERS) h.delete(name);
  if (paymentHeader) h.set(...paymentHeader);
  return doFetch(url, {
    method,
    headers: h,
    ...(body !== undefined ? { body } : {}),
    signal,
    redirect: paymentHeader ? 'manual' : 'follow',
  });
}

/** The payer of keys the caller holds: the viem account for EVM entries, the kit signer for Solana ones. */
function localPayer(o: Extract<ReturnType<typeof parseBuyerOptions>, { rpcUrl?: unknown }>): BuyerPayer {
  const solanaNetwork = o.network?.startsWith('solana:') ? o.network : undefined;
  const evmNetwork = o.network?.startsWith('eip155:') ? o.network : undefined;
  const evm = o.account ? localAccountPayer(o.account, { network: evmNetwork, rpcUrl: o.rpcUrl }) : undefined;
  const svm = o.solanaSigner
    ? localSolanaPayer(o.solanaSigner, { network: solanaNetwork, rpcUrl: o.solanaRpcUrl })
    : undefined;
  return eitherPayer(evm, svm);
}

/** The buyer's candidates rule: its options, else the payer's networks, the mode's schemes and assets rule. */
function acceptFilter(o: ReturnType<typeof parseBuyerOptions>, payer: BuyerPayer, local: boolean): AcceptFilter {
  return {
    networks: o.networks ?? payer.networks,
    network: o.network,
    schemes: o.schemes ?? (local ? LOCAL_DEFAULT_SCHEMES : DEFAULT_SCHEMES),
    maxPriceUsd: o.maxPriceUsd,
    assets: o.assets,
    assetOk: assetCheck(o.assets, local),
  };
}

export function createX402Buyer(options: X402BuyerOptions): X402Buyer {
  const o = parseBuyerOptions(options);
  const doFetch: FetchLike = o.fetch ?? ((input, init) => fetch(input, init));
  // The only difference between the two modes: who signs (and what else the wallet can answer).
  const local = !('client' in o);
  const payer: BuyerPayer = local ? localPayer(o) : treasuryPayer(o.client, o.walletId, o.capability);
  const recordSettlements = !local && o.recordSettlements !== false;
  const purchases = o.purchases ?? memoryPurchaseStore();
  const filter = acceptFilter(o, payer, local);
  const maxChallengeBytes = o.maxChallengeBytes ?? DEFAULT_MAX_CHALLENGE_BYTES;
  const maxResponseBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const sellerTimeoutMs = o.sellerTimeoutMs ?? DEFAULT_SELLER_TIMEOUT_MS;
  /** A seller's answer as text, at most the cap of its kind (a 402's challenge, or content). */
  const readBody = (response: Response, paymentSent: boolean) =>
    readCappedText(response, response.status === 402 ? maxChallengeBytes : maxResponseBytes, paymentSent);

  async function exchange(
    { url, method, signal, ...request }: SellerRequest,
    progress: ExchangeProgress,
    purchaseRequest: PurchaseRequest,
  ): Promise<X402Result> {
    const send = (target: string, paymentHeader?: [string, string]) =>
      sendToSeller(doFetch, { url: target, method, signal, ...request }, paymentHeader);
    const requestHash = purchaseRequestHash(method, url);
    // A purchase named by its key or id is resumed on its own request only: checked before anything is sent.
    await checkPurchaseRequest(purchases, purchaseRequest, requestHash, Date.now());
    const first = await send(url);
    const firstBody = await readBody(first, false);
    if (first.status !== 402) return { status: first.status, headers: first.headers, body: firstBody, paid: false };

    const challenge = readX402Challenge(first.headers, firstBody);
    // Paid only where the challenge came from, and only for a resource of that origin (challenge-origin.ts).
    const paidUrl = checkChallengeOrigin(url, answeredUrl(url, first), challenge.challenge);
    signal.throwIfAborted(); // nothing signed once the deadline passed (./seller-deadline.ts)
    const purchase = await openPurchase(purchases, purchaseRequest, { requestHash, paidUrl }, Date.now());
    const deps = { payer, purchases, filter };
    const { header: payment, requirements, signed } = await paymentOrForget(deps, purchase, challenge, paidUrl);
    // Until the seller answers, the purchase stays in its store: a retry sends this same payment.
    signal.throwIfAborted();
    progress.paymentSent = true;
    const second = await send(paidUrl, [paymentHeaderName(challenge.dialect), payment]);
    const secondBody = await readBody(second, true);
    progress.answered();
    const { header, decoded, receipt } = readReceipt(second.headers, requirements);
    const settled = (second.status >= 200 && second.status < 300) || (header !== null && (decoded?.success ?? true));
    if (settled) await closePurchase(purchases, purchase);
    if (second.status >= 200 && second.status < 300) {
      const result = paidResult(second, secondBody, receipt, requirements, signed);
      const { payment: recorded } = signed;
      return recordSettlements && recorded && receipt?.success
        ? withSettlementReport(result, payer, recorded, receipt.transaction)
        : result;
    }
    // A receipt header means the seller says it settled (or it is unreadable, and settlement cannot be ruled out).
    if (header !== null && (decoded === undefined || decoded.success))
      throw new PaymentRejectedError(second.status, secondBody, receipt);
    throw await whyNotPaid(
      payer,
      new X402PaymentFailedError(second.status, sellerReason(second, secondBody, decoded), secondBody),
      requirements,
    );
  }

  return {
    async request(url, init = {}) {
      const method = requestMethod(init);
      const headers = requestHeaders(init);
      const purchase = requestPurchase(init);
      const target = httpUrl(url);
      return withSellerDeadline(sellerTimeoutMs, init.signal, (signal, progress) =>
        exchange({ url: target, method, headers, body: init.body, signal }, progress, purchase),
      );
    },

    async fetch(input, init) {
      const request = new Request(input, init);
      httpUrl(request.url);
      const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer());
      const { url, method } = request;
      const r = await withSellerDeadline(sellerTimeoutMs, request.signal, (signal, progress) =>
        exchange({ url, method, headers: request.headers, body, signal }, progress, {}),
      );
      const headers = new Headers(r.headers);
      headers.delete('content-encoding');
      headers.delete('content-length');
      return new Response(NULL_BODY_STATUSES.has(r.status) ? null : r.body, { status: r.status, headers });
    },
  };
}

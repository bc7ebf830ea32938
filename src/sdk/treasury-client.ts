/**
 * `TreasuryClient`: the Treasury HTTP API for buyers — list wallets, read one, read its on-chain balance,
 * pay (have Treasury sign one x402 accepts entry under the wallet's policy) and transfer. Arguments and
 * replies are checked with zod (treasury-client-schemas.ts); a non-2xx is a `TreasuryApiError` carrying the
 * stable `error_code`, `user_message`, `recovery` and, for a policy denial, the `decision_id`.
 *
 * Defends against: calling Treasury without a bearer (`treasury_key_missing`, before any I/O); malformed
 * arguments reaching the wire; a reply of the wrong shape being used as a signature; the bearer following a
 * redirect to another host (redirects are not followed); hanging calls (per-call time-out).
 * A 503 (Treasury's database or signer briefly out of reach; nothing was signed) is retried after its
 * Retry-After (at most 5 s, within the call's time-out), `unavailableRetries` times: reads always, pay and
 * transfer only when the caller gave an idempotencyKey (or, for pay, a paymentIdentifier, sent as the key) — the
 * retry is then that same payment, never a second.
 * A connection that failed before the answer arrived (refused, reset, closed mid-reply) is retried the same
 * way after a short pause (250 ms, then 500 ms, …): the request may have been served and its answer lost, so
 * only a retry that Treasury answers from its Idempotency-Key record (the same signature) is safe for pay.
 * Does not defend against: a bearer leaked by the caller, or a Treasury URL the caller got wrong (use https
 * outside loopback). It never refreshes or retries on 401 (docs/buyer-sdk.md): the error goes to the caller.
 */
import type { z } from 'zod';
import {
  InvalidArgumentError,
  InvalidTreasuryReplyError,
  TreasuryApiError,
  TreasuryKeyMissingError,
  TreasuryUnreachableError,
} from './sdk-errors.js';
import {
  authorizationIdSchema,
  balanceSchema,
  payInputSchema,
  payReplySchema,
  settlementSchema,
  signedPaymentSchema,
  settlementTransactionSchema,
  transferInputSchema,
  treasuryClientOptionsSchema,
  walletIdSchema,
  walletListSchema,
  walletViewSchema,
  type Balance,
  type FetchLike,
  type PayInput,
  type PayReply,
  type Settlement,
  type SignedPayment,
  type TransferInput,
  type TreasuryClientOptions,
  type WalletView,
} from './treasury-client-schemas.js';

/** Parses `value` or throws `InvalidArgumentError` naming the first bad field under `what`. */
export function parseArgument<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue && issue.path.length > 0 ? `${what}.${issue.path.join('.')}` : what;
  throw new InvalidArgumentError(path, issue?.message ?? 'invalid');
}

export class TreasuryClient {
  readonly apiUrl: string;
  readonly #token: string;
  readonly #fetch: FetchLike;
  readonly #timeoutMs: number;
  readonly #unavailableRetries: number;

  constructor(options: TreasuryClientOptions) {
    if (!options?.token) throw new TreasuryKeyMissingError();
    const o = parseArgument(treasuryClientOptionsSchema, options, 'options');
    this.apiUrl = o.apiUrl.replace(/\/+$/, '');
    this.#token = o.token;
    this.#fetch = o.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = o.timeoutMs ?? 30_000;
    this.#unavailableRetries = o.unavailableRetries ?? 2;
  }

  /** Every wallet of the account, oldest first, read page by page (500 a page). */
  async listWallets(): Promise<WalletView[]> {
    const wallets: WalletView[] = [];
    const seen = new Set<string>();
    let cursor: string | null | undefined;
    do {
      const page = await this.#call(
        'GET',
        `/v1/wallets?limit=${WALLET_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        undefined,
        walletListSchema,
      );
      wallets.push(...page.wallets);
      cursor = page.next_cursor;
      // A server that hands back a cursor it gave before would page for ever.
      if (cursor && seen.has(cursor)) throw new InvalidTreasuryReplyError('GET /v1/wallets', 'a page cursor repeated');
      if (cursor) seen.add(cursor);
    } while (cursor);
    return wallets;
  }

  async getWallet(walletId: string): Promise<WalletView> {
    return this.#call('GET', walletPath(walletId), undefined, walletViewSchema);
  }

  /**
   * The wallet's balance. `options.unavailableRetries` (0 to the client's own) overrides the client's retries for
   * this read: a best-effort read — the buyer's explanation of a refused payment — asks once and moves on.
   */
  async getBalance(walletId: string, options?: { unavailableRetries?: number }): Promise<Balance> {
    const asked = options?.unavailableRetries;
    const retries =
      asked !== undefined && Number.isInteger(asked) && asked >= 0
        ? Math.min(asked, this.#unavailableRetries)
        : this.#unavailableRetries;
    return this.#call('GET', walletPath(walletId, '/balance'), undefined, balanceSchema, undefined, retries);
  }

  /**
   * Treasury checks the policy, records the spend and signs this accepts entry: the EIP-3009 authorization or
   * Permit2 witness transfer on an EVM chain, the x402 exact transaction (`transaction`) on Solana.
   */
  async pay(walletId: string, input: PayInput): Promise<PayReply> {
    const path = walletPath(walletId, '/pay');
    const p = parseArgument(payInputSchema, input, 'input');
    const body = {
      payment_requirements: p.paymentRequirements,
      ...(p.capability !== undefined ? { capability: p.capability } : {}),
      ...(p.authorization !== undefined ? { authorization: p.authorization } : {}),
      ...(p.gasSponsoring !== undefined ? { gas_sponsoring: p.gasSponsoring } : {}),
      ...(p.paymentIdentifier !== undefined ? { payment_identifier: p.paymentIdentifier } : {}),
      ...(p.challengeOrigin !== undefined ? { challenge_origin: p.challengeOrigin } : {}),
    };
    return this.#call('POST', path, body, payReplySchema, p.idempotencyKey ?? p.paymentIdentifier);
  }

  /**
   * Reports the transaction that settled a payment (EVM `exact` or `upto`, Solana `exact`): Treasury verifies it on chain and
   * records it (the payment shows `settled`); for `upto` it gives back the part of the signed maximum that was
   * not charged. The same transaction reported again answers the same.
   */
  async recordSettlement(walletId: string, authorizationId: string, transaction: string): Promise<Settlement> {
    const wallet = walletPath(walletId);
    const authorization = parseArgument(authorizationIdSchema, authorizationId, 'authorizationId');
    const tx = parseArgument(settlementTransactionSchema, transaction, 'transaction');
    return this.#call(
      'POST',
      `${wallet}/authorizations/${authorization}/settlement`,
      { transaction: tx },
      settlementSchema,
    );
  }

  /** An external transfer: recipient and USD amount; network and token are the wallet's. */
  async transfer(walletId: string, input: TransferInput): Promise<SignedPayment> {
    const path = walletPath(walletId, '/transfer');
    const t = parseArgument(transferInputSchema, input, 'input');
    const body = {
      to: t.to,
      amount_usd: t.amountUsd,
      ...(t.validForSeconds !== undefined ? { valid_for_seconds: t.validForSeconds } : {}),
    };
    return this.#call('POST', path, body, signedPaymentSchema, t.idempotencyKey);
  }

  async #call<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    schema: S,
    idempotencyKey?: string,
    unavailableRetries = this.#unavailableRetries,
  ): Promise<z.output<S>> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    const deadline = Date.now() + this.#timeoutMs;
    const retryable = method === 'GET' || idempotencyKey !== undefined;
    let text: string;
    let status: number;
    for (let attempt = 0; ; attempt++) {
      let retryAfterMs: number;
      try {
        const response = await this.#fetch(`${this.apiUrl}${path}`, {
          method,
          headers,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          redirect: 'manual',
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
        status = response.status;
        text = await response.text();
        retryAfterMs = retryAfter(response.headers.get('retry-after'));
      } catch (err) {
        // No answer (or half of one). The call's own time-out is final; anything else may be retried.
        const pauseMs = CONNECTION_RETRY_PAUSE_MS * (attempt + 1);
        if (!retryable || attempt >= unavailableRetries || Date.now() + pauseMs >= deadline)
          throw new TreasuryUnreachableError(this.apiUrl, err);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        continue;
      }
      if (status !== 503 || !retryable || attempt >= unavailableRetries || Date.now() + retryAfterMs >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    }
    let json: unknown = text;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      // not JSON: keep the text as the body
    }
    if (status < 200 || status >= 300) throw new TreasuryApiError(status, json);
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new InvalidTreasuryReplyError(
        `${method} ${path.replace(/wal_[A-Za-z0-9]+/, '{id}')}`,
        issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema',
      );
    }
    return parsed.data;
  }
}

/** `/v1/wallets/{id}` and what follows it, once `walletId` passed its schema (InvalidArgumentError otherwise). */
function walletPath(walletId: string, rest = ''): string {
  return `/v1/wallets/${parseArgument(walletIdSchema, walletId, 'walletId')}${rest}`;
}

/** The pause before the first retry of a call whose connection failed; the n-th retry waits n times as long. */
const CONNECTION_RETRY_PAUSE_MS = 250;
/** Wallets asked for per page of GET /v1/wallets (the route's largest). */
const WALLET_PAGE = 500;

/** A 503's Retry-After in ms: whole seconds as Treasury sends them, at most 5 s; 1 s when absent or unreadable. */
function retryAfter(header: string | null): number {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 5) * 1000 : 1000;
}

export type { Balance, FetchLike, PayInput, PayReply, SignedPayment, TransferInput, TreasuryClientOptions, WalletView };

/**
 * `TreasuryClient`: the Treasury HTTP API for buyers — list wallets, read one, read its on-chain balance,
 * pay (sign one x402 accepts entry under the wallet's policy) and transfer. Every reply is validated with
 * zod; a non-2xx is a `TreasuryApiError` carrying the stable `error_code`, `user_message`, `recovery` and,
 * for a policy denial, the `decision_id`.
 *
 * Defends against: calling Treasury without a bearer (`treasury_key_missing`, before any I/O); a confused
 * or hostile reply being used as a signature (schema-checked); hanging calls (time-out).
 * Does not defend against: a bearer leaked by the caller. It never refreshes on 401 (spec §5.7).
 */
import { z } from 'zod';
import type { PaymentRequirements } from '../x402/wire-schemas.js';
import { TreasuryApiError, TreasuryKeyMissingError, TreasurySdkError } from './sdk-errors.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TreasuryClientOptions {
  /** Treasury base URL, e.g. http://127.0.0.1:8402. */
  apiUrl: string;
  /** A Treasury-capable bearer: PAT (treasury or agent scope) or a Treasury api key. */
  token: string | undefined;
  fetch?: FetchLike;
  /** Per call; default 30,000 ms. */
  timeoutMs?: number;
}

const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`));
const address = hex(20);
const uint = z.string().regex(/^[0-9]{1,78}$/);

export const walletViewSchema = z
  .object({
    id: z.string(),
    account_id: z.string(),
    label: z.string().nullable(),
    chain: z.string(),
    network: z.string(),
    address,
    policy: z.record(z.string(), z.unknown()).nullable(),
    status: z.enum(['active', 'revoked']),
    key_version: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .loose();
export type WalletView = z.infer<typeof walletViewSchema>;

export const balanceSchema = z
  .object({
    wallet_id: z.string(),
    network: z.string(),
    asset: address,
    address,
    balance_raw: uint,
    balance_usd: z.string(),
    stale: z.boolean(),
    updated_at: z.string(),
  })
  .loose();
export type Balance = z.infer<typeof balanceSchema>;

export const signedPaymentSchema = z
  .object({
    authorization: z.object({ from: address, to: address, value: uint, validAfter: uint, validBefore: uint, nonce: hex(32) }).strict(),
    signature: hex(65),
    authorization_id: z.string(),
    decision_id: z.string(),
    wallet_id: z.string(),
    network: z.string(),
    asset: address,
    amount_usd: z.string(),
    headroom: z.unknown().optional(),
  })
  .loose();
export type SignedPayment = z.infer<typeof signedPaymentSchema>;

export interface PayInput {
  paymentRequirements: PaymentRequirements | Record<string, unknown>;
  capability?: string;
  /** Terms the caller fixes in the EIP-3009 message (nonce, window); Treasury bounds them. */
  authorization?: { nonce?: string; valid_after?: string; valid_before?: string };
  idempotencyKey?: string;
}

export interface TransferInput {
  to: string;
  amountUsd: string;
  idempotencyKey?: string;
}

export class TreasuryClient {
  readonly apiUrl: string;
  private readonly token: string | undefined;
  private readonly doFetch: FetchLike;
  private readonly timeoutMs: number;

  constructor(options: TreasuryClientOptions) {
    if (!options.token) throw new TreasuryKeyMissingError();
    this.apiUrl = options.apiUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  async listWallets(): Promise<WalletView[]> {
    const reply = await this.call('GET', '/v1/wallets', undefined, z.object({ wallets: z.array(walletViewSchema) }).loose());
    return reply.wallets;
  }

  getWallet(walletId: string): Promise<WalletView> {
    return this.call('GET', `/v1/wallets/${encodeURIComponent(walletId)}`, undefined, walletViewSchema);
  }

  getBalance(walletId: string): Promise<Balance> {
    return this.call('GET', `/v1/wallets/${encodeURIComponent(walletId)}/balance`, undefined, balanceSchema);
  }

  pay(walletId: string, input: PayInput): Promise<SignedPayment> {
    const body = {
      payment_requirements: input.paymentRequirements,
      ...(input.capability ? { capability: input.capability } : {}),
      ...(input.authorization ? { authorization: input.authorization } : {}),
    };
    return this.call('POST', `/v1/wallets/${encodeURIComponent(walletId)}/pay`, body, signedPaymentSchema, input.idempotencyKey);
  }

  transfer(walletId: string, input: TransferInput): Promise<SignedPayment> {
    return this.call('POST', `/v1/wallets/${encodeURIComponent(walletId)}/transfer`, { to: input.to, amount_usd: input.amountUsd }, signedPaymentSchema, input.idempotencyKey);
  }

  private async call<S extends z.ZodType>(method: 'GET' | 'POST', path: string, body: unknown, schema: S, idempotencyKey?: string): Promise<z.output<S>> {
    if (!this.token) throw new TreasuryKeyMissingError();
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
    let response: Response;
    try {
      response = await this.doFetch(`${this.apiUrl}${path}`, {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        redirect: 'manual',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new TreasurySdkError('treasury_unreachable', `Treasury at ${this.apiUrl} did not answer: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (response.status < 200 || response.status >= 300) throw new TreasuryApiError(response.status, json ?? { user_message: text.slice(0, 300) });
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new TreasurySdkError('invalid_treasury_reply', `Treasury answered ${method} ${path} with an unexpected body.`);
    return parsed.data;
  }
}

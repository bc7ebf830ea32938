/**
 * Every signer call that is not a payment's waits here for a place among this process's `inFlight`
 * (TREASURY_SIGNER_OTHER_IN_FLIGHT), a tenant's an eighth of them at most, tenants served in turn
 * (base/fair-queue.ts): wallet and account keys, key destructions, the signer's policy reads, writes and receipts. A
 * payment's signatures never wait here — the pay admission gave the payment its place (../pay/pay-admission.ts).
 *
 * Defends: the signer's queue, shared by every tenant, filled by one tenant's calls — the signer answers `busy` when
 * it is full, and that failed whoever's payment came next. A tenant is named the way the pay routes name it: a
 * Treasury account (`acct_…`) counts under the platform account of its agent's owner (`tenantOf`), so one owner's
 * agents share one share. Past 64 of a tenant's calls waiting: 429 `signer_calls_exceeded`; a full queue gives way
 * from its longest backlog first; past it, or after the wait (`waitMs`; 1 s at most for the calls made while the
 * caller holds a database lock: key generation and destruction), 503 `signer_overloaded`. Calls made for no tenant
 * (a new account's key at sign-up, the operator's mints) share one name, whose refusals are 503 too (they are not
 * the caller's own doing). Every refusal counts in `treasury_signer_call_refusals_total{reason}`.
 * Does not defend: one person's many accounts (each has a share), nor how long the signer takes once a call left.
 */
import type { QueueRefusal } from '../../../base/fair-queue.js';
import { TenantPlaces, WAITING_PER_TENANT, type TenantPlacesBounds } from '../auth/tenant-places.js';
import type { SignerMethod } from '../../../signer/protocol/signer-protocol.js';
import { AppError } from '../errors/app-error.js';
import type { TreasuryMetrics } from '../metrics/treasury-metrics.js';

/** A payment's signatures: admitted per tenant before the payment starts, not again here. */
export const PAYMENT_METHODS: ReadonlySet<SignerMethod> = new Set<SignerMethod>([
  'sign_transfer_authorization',
  'sign_permit2_witness_transfer',
  'sign_solana_transaction',
  'sign_eip2612_permit',
]);

/** Calls made while their caller holds a database lock and transaction: they wait 1 s at most. */
const LOCKED_METHODS: ReadonlySet<SignerMethod> = new Set<SignerMethod>([
  'create_wallet_key',
  'destroy_wallet_key',
  'create_account_key',
]);
const LOCKED_CALL_WAIT_MS = 1_000;

/** The name of calls made for no tenant. */
const NO_TENANT = '';

/** Calls at the signer at once from this process, the longest a call waits, and whose share a Treasury account takes. */
export type SignerCallBounds = TenantPlacesBounds;

export class SignerCallAdmission {
  private readonly places: TenantPlaces;

  constructor(
    bounds: SignerCallBounds,
    private readonly metrics: Pick<TreasuryMetrics, 'signerCallRefusals'>,
  ) {
    this.places = new TenantPlaces(bounds);
  }

  /** Runs `send` once `tenant` (a Treasury or platform account id; none: the shared name) has a place. */
  async run<T>(method: SignerMethod, tenant: string | undefined, send: () => Promise<T>): Promise<T> {
    const name = tenant ?? NO_TENANT;
    const wait = LOCKED_METHODS.has(method) ? LOCKED_CALL_WAIT_MS : undefined;
    const outcome = await this.places.run(name, send, wait);
    if (outcome.ran) return outcome.value;
    this.metrics.signerCallRefusals.inc({ reason: outcome.reason });
    throw this.refusal(outcome.reason, name);
  }

  private refusal(reason: QueueRefusal, name: string): AppError {
    if (reason === 'tenant_queue_full' && name !== NO_TENANT)
      return new AppError('signer_calls_exceeded', {
        fields: { in_flight_max: this.places.perTenant, queue_max: WAITING_PER_TENANT, retry_after_seconds: 1 },
        headers: { 'Retry-After': '1' },
      });
    return new AppError('signer_overloaded', { headers: { 'Retry-After': '1' } });
  }
}

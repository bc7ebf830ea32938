/**
 * Proof that an account's gate answers at the public address it names (docs/gate.md#the-gates-public-address),
 * mirroring a seller's origin proof (../origin/seller-origin-verification.ts): the account is issued one token,
 * kept; its gate serves it at `/.well-known/xx-gate-verification.txt`; the platform fetches that file itself,
 * through the same vetted outbound path and address rules as origins (../origin/origin-verifier.ts:
 * TREASURY_VERIFY_ALLOW_PRIVATE, the allowed ports, no redirects, 4 KiB), and only then marks the URL verified.
 * The public catalogue lists the account's managed-proxy sellers at a verified address only
 * (src/api/discovery/discovery-store.ts).
 *
 * Defends: an account listing its sellers at an address it does not control (someone else's host, another
 * account's gate: the token is per account); a production address over plain HTTP; an address changed after
 * its proof staying listed (a new URL is unproven). Does not defend: an address that changes hands after it was
 * proven (prove again to refresh; nothing re-checks it on a timer).
 */
import { randomBytes } from 'node:crypto';
import {
  canonicalGateUrl,
  GATE_VERIFICATION_PATH,
  type GateAddressBody,
  type GateAddressView,
} from '../../../shared/gate-address-schema.js';
import { AppError } from '../../errors/app-error.js';
import { guardedFetchText, type OriginFetchOptions } from '../origin/origin-verifier.js';
import type { GateAddressRow, PgGateAddressStore } from './gate-address-store.js';

const MAX_BYTES = 4096;

export interface GateAddressServiceDeps {
  store: Pick<PgGateAddressStore, 'find' | 'set' | 'markVerified'>;
  clock: () => Date;
  outbound: OriginFetchOptions;
  /** Production mode: the address must be https. */
  requireHttps: boolean;
}

function viewOf(row: GateAddressRow): GateAddressView {
  return {
    account_id: row.account_id,
    url: row.url,
    network: row.network,
    path: GATE_VERIFICATION_PATH,
    token: row.verification_token,
    verified_at: row.verified_at?.toISOString() ?? null,
  };
}

export class GateAddressService {
  constructor(private readonly deps: GateAddressServiceDeps) {}

  async read(accountId: string): Promise<GateAddressView> {
    const row = await this.deps.store.find(accountId);
    if (!row) throw new AppError('gate_address_not_set');
    return viewOf(row);
  }

  /** Names the account's gate address (unproven unless it is the one already proven) and its token. */
  async set(accountId: string, body: GateAddressBody): Promise<GateAddressView> {
    const url = canonicalGateUrl(body.url);
    if (this.deps.requireHttps && !url.startsWith('https://'))
      throw new AppError('invalid_request', { message: "The gate's public address must be https in production." });
    const token = `xx-gate-${randomBytes(16).toString('hex')}`;
    return viewOf(await this.deps.store.set(accountId, { url, network: body.network }, token));
  }

  /** Fetches the account's verification file from its gate address and marks that address verified. */
  async verify(accountId: string): Promise<GateAddressView> {
    const row = await this.deps.store.find(accountId);
    if (!row) throw new AppError('gate_address_not_set');
    const file = new URL(GATE_VERIFICATION_PATH, row.url);
    const body = await guardedFetchText(file, {
      ...this.deps.outbound,
      maxBytes: MAX_BYTES,
      notFound: 'gate_verification_not_found',
    });
    const expected_file = file.toString();
    if (!body.split(/\s+/).includes(row.verification_token))
      throw new AppError('gate_verification_token_mismatch', { fields: { expected_file } });
    const marked = await this.deps.store.markVerified(accountId, row.url, this.deps.clock());
    if (!marked)
      throw new AppError('gate_verification_token_mismatch', {
        message: "The gate's address changed while it was being verified; verify the new address.",
        fields: { expected_file },
      });
    return viewOf(marked);
  }
}

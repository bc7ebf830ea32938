/**
 * Proof that a seller controls the origin it names: a token issued once per seller and kept, which the
 * origin must serve at `/.well-known/xx-verification.txt` (fetched through the vetted outbound path of
 * ./origin-verifier.ts); a new origin must be proven again (../seller-service.ts clears `verified_at`). The
 * token and the mark are kept through `SellerStore` (../store/seller-stores.ts).
 *
 * Defends: a seller claiming an origin it does not control (the gate sells only verified origins,
 * docs/gate.md); an origin changed while the old one was being checked being marked verified (the update names
 * the origin that was fetched); concurrent first requests issuing two tokens (the token is written only where
 * none is yet); a file that only mentions the token in a longer line (./origin-verifier.ts `servesToken`: a line
 * of its own); an origin that changes hands after it was verified staying verified — src/api/sellers/proofs/
 * fetches the file again through `fetchOriginToken` below (at most once per TREASURY_PROOF_RECHECK_SECONDS) and
 * withdraws the mark when the file no longer serves the token, or when the origin stays unreachable longer than
 * TREASURY_PROOF_GRACE_SECONDS. Does not defend: a new owner serving the old token (whoever serves it controls
 * the origin now), or the time between two re-checks.
 */
import { randomBytes } from 'node:crypto';
import type { OriginVerification, VerifiedSeller } from '../../../shared/api-responses/seller-responses.js';
import { AppError } from '../../errors/app-error.js';
import { fetchVerificationFile, servesToken, type OriginFetchOptions } from './origin-verifier.js';
import { sellerView, type SellerRow } from '../seller-views.js';
import type { SellerStore } from '../store/seller-stores.js';

const WELL_KNOWN_PATH = '/.well-known/xx-verification.txt';

/**
 * Fetches `<origin>/.well-known/xx-verification.txt` and refuses (`verification_token_mismatch`) unless it serves
 * `token`; the fetch's own refusals are its codes (./origin-verifier.ts). The first proof and every re-check go
 * through here.
 */
export async function fetchOriginToken(origin: string, token: string, outbound: OriginFetchOptions): Promise<void> {
  const body = await fetchVerificationFile(origin, outbound);
  if (!servesToken(body, token))
    throw new AppError('verification_token_mismatch', { fields: { expected_file: `${origin}${WELL_KNOWN_PATH}` } });
}

export class SellerOriginVerification {
  constructor(
    private readonly store: Pick<SellerStore, 'keepVerificationToken' | 'markOriginVerified'>,
    private readonly clock: () => Date,
    private readonly outbound: OriginFetchOptions,
  ) {}

  /** The token the seller must serve at /.well-known/xx-verification.txt (issued once, kept). */
  async token(seller: SellerRow): Promise<string> {
    if (seller.verification_token) return seller.verification_token;
    const token = `xx-verify-${randomBytes(16).toString('hex')}`;
    return this.store.keepVerificationToken(seller.id, token);
  }

  /** What GET /v1/sellers/{id}/verify answers: where to serve which token. */
  async instructions(seller: SellerRow): Promise<OriginVerification> {
    return {
      seller_id: seller.id,
      origin: seller.origin,
      path: WELL_KNOWN_PATH,
      token: await this.token(seller),
      verified_at: seller.verified_at?.toISOString() ?? null,
    };
  }

  async verify(seller: SellerRow): Promise<VerifiedSeller> {
    if (!seller.origin) throw new AppError('origin_not_configured');
    const token = await this.token(seller);
    await fetchOriginToken(seller.origin, token, this.outbound);
    // Only the origin that served the token is verified: one changed meanwhile stays unverified.
    const row = await this.store.markOriginVerified(seller.id, seller.origin, this.clock());
    if (!row)
      throw new AppError('verification_token_mismatch', {
        message: 'The origin changed while it was being verified; verify the new origin.',
        fields: { expected_file: `${seller.origin}${WELL_KNOWN_PATH}` },
      });
    return { ...sellerView(row), verified: true };
  }
}

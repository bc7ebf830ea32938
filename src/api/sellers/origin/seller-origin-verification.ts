/**
 * Proof that a seller controls the origin it names: a token issued once per seller and kept, which the
 * origin must serve at `/.well-known/xx-verification.txt` (fetched through the vetted outbound path of
 * ./origin-verifier.ts); a new origin must be proven again (../seller-service.ts clears `verified_at`). The
 * token and the mark are kept through `SellerStore` (../store/seller-stores.ts).
 *
 * Defends: a seller claiming an origin it does not control (the gate sells only verified origins,
 * docs/gate.md); an origin changed while the old one was being checked being marked verified (the update names
 * the origin that was fetched); concurrent first requests issuing two tokens (the token is written only where
 * none is yet). Does not defend: an origin that changes hands after it was
 * verified.
 */
import { randomBytes } from 'node:crypto';
import type { OriginVerification, VerifiedSeller } from '../../../shared/api-responses/seller-responses.js';
import { AppError } from '../../errors/app-error.js';
import { fetchVerificationFile, type OriginFetchOptions } from './origin-verifier.js';
import { sellerView, type SellerRow } from '../seller-views.js';
import type { SellerStore } from '../store/seller-stores.js';

const WELL_KNOWN_PATH = '/.well-known/xx-verification.txt';

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
    const body = await fetchVerificationFile(seller.origin, this.outbound);
    if (!body.split(/\s+/).includes(token))
      throw new AppError('verification_token_mismatch', {
        fields: { expected_file: `${seller.origin}${WELL_KNOWN_PATH}` },
      });
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

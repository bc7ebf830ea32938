/**
 * The API's bound settings as ./app-config.ts takes them in one piece: what keeps one seller or account from taking
 * more than its share (./seller-bounds-config.ts) and how much the API keeps of what grows with use
 * (./keep-bounds-config.ts), and how often proofs of control are fetched again (./proof-recheck-config.ts), and how
 * many agents an account may hold (./account-bounds-config.ts), and how many payments one tenant may have at work
 * (./pay-admission-config.ts) — their environment variables, and the fields of
 * `AppConfig` they become.
 *
 * Defends: nothing of its own (each module's schema bounds its variables); it only joins them.
 */
import { accountBoundsConfigOf, accountBoundsEnvShape, type AccountBoundsConfig } from './account-bounds-config.js';
import { payAdmissionConfigOf, payAdmissionEnvShape, type PayAdmissionConfig } from './pay-admission-config.js';
import { keepBoundsConfigOf, keepBoundsEnvShape, type KeepBoundsConfig } from './keep-bounds-config.js';
import { proofRecheckConfigOf, proofRecheckEnvShape, type ProofRecheckConfig } from './proof-recheck-config.js';
import { sellerBoundsConfigOf, sellerBoundsEnvShape, type SellerBoundsConfig } from './seller-bounds-config.js';

export const boundsEnvShape = {
  ...sellerBoundsEnvShape,
  ...keepBoundsEnvShape,
  ...proofRecheckEnvShape,
  ...accountBoundsEnvShape,
  ...payAdmissionEnvShape,
};

export type BoundsConfig = SellerBoundsConfig &
  KeepBoundsConfig &
  ProofRecheckConfig &
  AccountBoundsConfig &
  PayAdmissionConfig;

export function boundsConfigOf(
  e: Parameters<typeof sellerBoundsConfigOf>[0] &
    Parameters<typeof keepBoundsConfigOf>[0] &
    Parameters<typeof proofRecheckConfigOf>[0] &
    Parameters<typeof accountBoundsConfigOf>[0] &
    Parameters<typeof payAdmissionConfigOf>[0],
): BoundsConfig {
  return {
    ...sellerBoundsConfigOf(e),
    ...keepBoundsConfigOf(e),
    ...proofRecheckConfigOf(e),
    ...accountBoundsConfigOf(e),
    ...payAdmissionConfigOf(e),
  };
}

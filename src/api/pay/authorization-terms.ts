/**
 * The terms fixed in a signed message before it is reserved: the `upto` facilitator from the accepts entry,
 * and the validity window and nonce — Treasury's own, or the caller's, bounded by maxTimeoutSeconds.
 *
 * Defends against: an `upto` payment bound to no facilitator or to another transfer method; a caller
 * window that is closed, not yet open or longer than the seller allows. Nonce reuse is refused later by
 * the database (UNIQUE per sender and scheme).
 */
import { timeOrderedHex } from '../auth/time-ordered-hex.js';
import { getAddress } from 'viem';
import { AppError } from '../errors/app-error.js';
import type { AuthorizationTerms, PaymentRequirements } from './pay-schemas.js';

/** Signed authorizations start this far in the past, to tolerate clock skew between us and the chain. */
const VALID_AFTER_SKEW_SECONDS = 600;

/** `upto`: the facilitator address from `extra.facilitatorAddress`; the transfer method can only be Permit2. */
export function uptoFacilitator(requirements: PaymentRequirements): string {
  const extra = requirements.extra ?? {};
  const facilitator = extra.facilitatorAddress;
  const method = extra.assetTransferMethod;
  const problems: string[] = [];
  if (typeof facilitator !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(facilitator) || /^0x0{40}$/.test(facilitator))
    problems.push("extra.facilitatorAddress must be the facilitator's 0x address");
  if (method !== undefined && method !== 'permit2') problems.push('extra.assetTransferMethod may only be "permit2"');
  if (problems.length > 0) throw new AppError('upto_requirements_invalid', { fields: { problems } });
  return getAddress(facilitator as string);
}

/**
 * The EIP-3009 window and nonce: ours by default (validAfter 10 minutes back for clock skew, validBefore at
 * maxTimeoutSeconds, a time-ordered nonce so that the wallet's nonce index grows at its edge), or the
 * caller's, which must be open now and may not outlast maxTimeoutSeconds.
 */
export function authorizationWindow(plan: { validForSeconds: number; terms?: AuthorizationTerms | undefined }): {
  validAfter: string;
  validBefore: string;
  nonce: string;
} {
  const wallNow = Math.floor(Date.now() / 1000);
  const validAfter = plan.terms?.valid_after ?? String(wallNow - VALID_AFTER_SKEW_SECONDS);
  const validBefore = plan.terms?.valid_before ?? String(wallNow + plan.validForSeconds);
  const nonce = plan.terms?.nonce ?? `0x${timeOrderedHex(64)}`;
  const problems: string[] = [];
  if (Number(validAfter) > wallNow) problems.push('valid_after is in the future');
  if (Number(validBefore) <= wallNow + 5) problems.push('valid_before has passed or is less than 6 s away');
  if (Number(validBefore) > wallNow + plan.validForSeconds + 60)
    problems.push(`valid_before is more than maxTimeoutSeconds (${plan.validForSeconds} s) away`);
  if (problems.length > 0)
    throw new AppError('invalid_authorization_terms', {
      message: `The proposed authorization cannot be signed: ${problems.join('; ')}.`,
      fields: { problems },
    });
  return { validAfter, validBefore, nonce };
}

/**
 * `mapRecoveryError`: turns a Treasury refusal whose recovery block (docs/api.md#errors) the SDK knows into a typed
 * error — `raise_pat_cap` → `PatCapReachedError` (user_message and settings_url unchanged), `reauthenticate`
 * → `ReauthenticateError`. Every other error, including a `TreasuryApiError` with a recovery kind the SDK
 * does not act on (`fund_wallet`, `create_wallet`, a future kind, …), is returned as it came, so callers can
 * still branch on `err.recovery?.kind` themselves (spec: an unknown kind is treated as no recovery).
 */
import { PatCapReachedError, ReauthenticateError, TreasuryApiError } from './sdk-errors.js';

export function mapRecoveryError(err: unknown): unknown {
  if (!(err instanceof TreasuryApiError) || err.recovery === undefined) return err;
  switch (err.recovery.kind) {
    case 'raise_pat_cap':
      return new PatCapReachedError(err);
    case 'reauthenticate':
      return new ReauthenticateError(err);
    default:
      return err;
  }
}

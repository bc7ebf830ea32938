/**
 * The seller middleware's fallbacks (src/x402/seller/seller-options.ts), read once from `options.env`: listed
 * here whole, for docs/configuration.md.
 */
import type { Entries } from './entry.js';

export const KOA_ENTRIES: Entries = {
  XX_PAY_TO: { meaning: 'payee address when `pay_to` is not given' },
  FACILITATOR_URL: { meaning: 'x402 facilitator when `facilitator_url` is not given' },
  XX_API_URL: { meaning: 'the Treasury platform the ledger is reported to when `api_url` is not given' },
  XX_ALLOW_LOCAL_ONLY: {
    meaning: '`1`: paid routes answer without a facilitator (sandbox only; production refuses it in the API)',
  },
  XX_DISABLE_BODY_CAPTURE: { meaning: '`1`: do not capture response bodies for the ledger' },
};

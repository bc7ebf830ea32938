/**
 * Building blocks shared by route schemas: bounded amounts, text that can be stored, and identifier
 * patterns for path parameters.
 *
 * Defends: a value that passes its schema and then fails the statement that stores it. The pay path writes
 * several tenants' payments in one statement (src/api/pay/store/reservation-writer.ts), so such a value would fail
 * every write in it; here it is a 400 before anything is decided (docs/security-model.md, "Input bounds").
 * - Amounts (USD strings and raw 6-decimal token integers) are at most MAX_AMOUNT_MICRO: far inside the
 *   bigint columns that hold them (amount_micro, price_micro, cap_micro) and the running totals that add
 *   them up (spent_micro: more than 9,000 maximal amounts fit), exact as a JSON double (below 2^53), and
 *   above what the signer signs (its own maximum per signature, `value_max` in signer/assert.ts, is lower).
 * - Stored text follows the one rule of src/shared/storable-text.ts (well-formed Unicode without control,
 *   bidirectional-control, invisible or line-separator characters; prose may also hold line breaks and tabs),
 *   re-exported here for the route schemas.
 */
import { z } from 'zod';
import { isUsdString, parseUsd } from '../../../../policy/money.js';
import { MAX_AMOUNT_MICRO, MAX_AMOUNT_USD } from '../../../shared/amount-bounds.js';
import { usdAmountOrZeroSchema, usdAmountSchema, walletPolicySchema } from '../../../../policy/policy-schema.js';
import { isStorableProse, isStorableText } from '../../../shared/storable-text.js';

export { isStorableText, toStorableText } from '../../../shared/storable-text.js';

const STORABLE_MESSAGE =
  'must be well-formed Unicode without control, bidirectional-control, invisible or line-separator characters';

/** Text stored as it is sent: at most `max` UTF-16 code units (checked first), storable (see isStorableText). */
export function storedString(max: number) {
  return z.string().max(max, { abort: true }).refine(isStorableText, STORABLE_MESSAGE);
}

/** As storedString, for prose that may span lines: tab, line feed and carriage return are allowed. */
export function storedProse(max: number) {
  return z
    .string()
    .max(max, { abort: true })
    .refine(
      isStorableProse,
      'must be well-formed Unicode without control characters other than line breaks and tabs, bidirectional-control, invisible or line-separator characters',
    );
}

/** Printable stored text (see storedString), non-empty, without leading or trailing white space. */
export function plainText(max: number) {
  return storedString(max)
    .min(1)
    .refine((v) => v.trim() === v, 'must not start or end with white space');
}

const withinBound = (v: string) => parseUsd(v) <= MAX_AMOUNT_MICRO;
const boundMessage = `must be at most ${MAX_AMOUNT_USD} USD`;

/** A positive USD amount (transfers, caps), at most MAX_AMOUNT_MICRO. */
export const usdAmount = usdAmountSchema.refine((v) => !isUsdString(v) || withinBound(v), boundMessage);

/** A USD amount that may be zero (a free route's price), at most MAX_AMOUNT_MICRO. */
export const usdAmountOrZero = usdAmountOrZeroSchema.refine((v) => !isUsdString(v) || withinBound(v), boundMessage);

/** The USD fields of a wallet policy (policy/policy-schema.ts), each also held to MAX_AMOUNT_MICRO. */
const POLICY_CAPS = ['per_tx_cap_usd', 'daily_cap_usd', 'weekly_cap_usd', 'monthly_cap_usd'] as const;

/** A wallet policy as routes take it: policy/policy-schema.ts, with every USD cap at most MAX_AMOUNT_MICRO. */
export const boundedPolicy = walletPolicySchema.superRefine((policy, ctx) => {
  for (const field of POLICY_CAPS) {
    const value = policy[field];
    if (value !== undefined && !withinBound(value))
      ctx.addIssue({ code: 'custom', path: [field], message: boundMessage });
  }
  for (const [capability, value] of Object.entries(policy.capability_cap_usd ?? {})) {
    if (!withinBound(value))
      ctx.addIssue({ code: 'custom', path: ['capability_cap_usd', capability], message: boundMessage });
  }
});

/** A PAT's requested lifetime (`expires_in_seconds`): a minute to a leap year. */
export const patLifetimeSeconds = z
  .number()
  .int()
  .min(60)
  .max(366 * 24 * 3600);

export const accountIdSchema = z.string().regex(/^acct_[0-9a-f]{24}$/, 'expected an account id (acct_…)');
export const agentIdSchema = z.string().regex(/^agt_[0-9a-f]{24}$/, 'expected an agent id (agt_…)');
export const walletIdSchema = z.string().regex(/^wal_[0-9a-f]{24}$/, 'expected a wallet id (wal_…)');
export const authorizationIdSchema = z.string().regex(/^auth_[0-9a-f]{24}$/, 'expected an authorization id (auth_…)');

/** An `Idempotency-Key` header (the pay, transfer and payout routes): a retry with the same key is the same operation. */
export const idempotencyKeySchema = z.string().regex(/^[A-Za-z0-9_.:\-]{1,128}$/);

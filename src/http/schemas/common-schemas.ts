/**
 * Building blocks shared by route schemas: bounded, well-formed text without control characters, and
 * identifier patterns for path parameters.
 */
import { z } from 'zod';

/** Printable, well-formed Unicode (no lone surrogates, no control characters), trimmed, bounded. */
export function plainText(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((v) => v.isWellFormed(), 'must be well-formed Unicode')
    .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), 'must not contain control characters')
    .refine((v) => v.trim() === v, 'must not start or end with white space');
}

export const accountIdSchema = z.string().regex(/^acct_[0-9a-f]{24}$/, 'expected an account id (acct_…)');
export const agentIdSchema = z.string().regex(/^agt_[0-9a-f]{24}$/, 'expected an agent id (agt_…)');
export const walletIdSchema = z.string().regex(/^wal_[0-9a-f]{24}$/, 'expected a wallet id (wal_…)');
export const authorizationIdSchema = z.string().regex(/^auth_[0-9a-f]{24}$/, 'expected an authorization id (auth_…)');

/** Request schemas of the wallet routes. The policy object is the pure policy/ schema. */
import { z } from 'zod';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { plainText } from './common-schemas.js';
import { pageQuerySchema } from './page-query-schema.js';

export const createWalletBodySchema = z
  .object({
    label: plainText(128).optional(),
    chain: z.string().min(1).max(64).optional(),
    policy: walletPolicySchema.optional(),
  })
  .strict();

export const emptyBodySchema = z.object({}).strict();

/**
 * POST /v1/wallets/{id}/rotate and /revoke: `abandon_balance: true` destroys the key even though its address
 * may hold USDC (refused otherwise while it does, or while the balance cannot be read).
 */
export const keyRetirementBodySchema = z.object({ abandon_balance: z.boolean().optional() }).strict();

export const listWalletsQuerySchema = pageQuerySchema.extend({ status: z.enum(['active', 'revoked']).optional() }).strict();

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

export const listWalletsQuerySchema = pageQuerySchema.extend({ status: z.enum(['active', 'revoked']).optional() }).strict();

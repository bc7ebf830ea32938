/** Request schemas of the wallet routes. The policy object is the pure policy/ schema. */
import { z } from 'zod';
import { walletPolicySchema } from '../../../policy/policy-schema.js';
import { plainText } from './common-schemas.js';

export const createWalletBodySchema = z
  .object({
    label: plainText(128).optional(),
    chain: z.string().min(1).max(64).optional(),
    policy: walletPolicySchema.optional(),
  })
  .strict();

export const emptyBodySchema = z.object({}).strict();

export const listWalletsQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(100),
    status: z.enum(['active', 'revoked']).optional(),
    /** `next_cursor` of the previous page. */
    cursor: z.string().max(200).regex(/^[A-Za-z0-9_-]+$/).optional(),
  })
  .strict();

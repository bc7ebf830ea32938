/** Request schemas of the wallet routes. The policy object is the pure policy/ schema. */
import { z } from 'zod';
import { pageQuerySchema } from '../http/schemas/page-query-schema.js';

export { createWalletBodySchema } from '../http/schemas/wallet-body-schema.js';

export const emptyBodySchema = z.object({}).strict();

/**
 * POST /v1/wallets/{id}/rotate and /revoke: `abandon_balance: true` destroys the key even though its address
 * may hold USDC (refused otherwise while it does, or while the balance cannot be read).
 */
export const keyRetirementBodySchema = z.object({ abandon_balance: z.boolean().optional() }).strict();

export const listWalletsQuerySchema = pageQuerySchema
  .extend({ status: z.enum(['active', 'revoked']).optional() })
  .strict();

/** GET /v1/wallets/{id}/decisions and /audit: how many of the newest rows (1–100, default 20). */
export const historyQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }).strict();

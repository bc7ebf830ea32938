/** Request schemas of the agent routes (POST /v1/agents, POST /v1/agents/{id}/wallets). */
import { z } from 'zod';
import { plainText } from '../http/schemas/common-schemas.js';
import { createWalletBodySchema } from '../http/schemas/wallet-body-schema.js';

export const spawnAgentBodySchema = z.object({ label: plainText(128).optional() }).strict();

/** Like POST /v1/wallets; `network` (CAIP-2) is accepted as another spelling of `chain`. */
export const agentWalletBodySchema = createWalletBodySchema
  .extend({
    network: z
      .string()
      .regex(/^eip155:[1-9][0-9]{0,15}$/)
      .optional(),
  })
  .strict();

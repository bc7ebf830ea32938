/** Request schemas of the Treasury account routes. */
import { z } from 'zod';
import { patLifetimeSeconds, plainText } from '../http/schemas/common-schemas.js';

export const mintTreasuryBodySchema = z
  .object({
    owner_type: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, 'expected a lower-case identifier such as "agent" or "org"'),
    owner_id: plainText(256),
  })
  .strict();

export const issuePatBodySchema = z
  .object({
    label: plainText(128).optional(),
    expires_in_seconds: patLifetimeSeconds.optional(),
  })
  .strict();

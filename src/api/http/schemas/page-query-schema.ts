/**
 * The query of every paged list: `limit` (1–500, default 100) and `cursor` (the previous page's
 * `next_cursor`). The cursor is only checked for its alphabet and length here; the list it belongs to
 * decodes it and refuses one of another list (src/api/db/keyset-cursor.ts). Lists with filters extend this.
 */
import { z } from 'zod';

export const pageQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(100),
    /** `next_cursor` of the previous page. */
    cursor: z
      .string()
      .max(200)
      .regex(/^[A-Za-z0-9_-]+$/)
      .optional(),
  })
  .strict();

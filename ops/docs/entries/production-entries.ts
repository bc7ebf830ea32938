/** Production mode's own inputs (src/api/config/production-mode.ts) besides the API's schema, for docs/configuration.md. */
import type { Entries } from './entry.js';

export const PRODUCTION_ENTRIES: Entries = {
  NODE_OPTIONS: { meaning: 'a test preload here (or in the node options) is refused in production mode' },
  TREASURY_TEST_PAY_FAULT: {
    meaning: 'test fault injection (only through the test preload); refused in production mode',
  },
};

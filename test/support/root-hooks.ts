/** Mocha root hooks: stop the shared embedded PostgreSQL once every suite is done. */
import { stopTestPostgres } from './test-database.js';

export const mochaHooks = {
  async afterAll(this: unknown) {
    await stopTestPostgres();
  },
};

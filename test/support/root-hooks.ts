/** Mocha root hooks: stop the shared embedded PostgreSQL (and the shared KMS emulator, if any) once every suite is done. */
import { stopSharedKmsEmulator } from './kms-test-backend.js';
import { stopTestPostgres } from './test-database.js';

export const mochaHooks = {
  async afterAll(this: unknown) {
    await stopTestPostgres();
    await stopSharedKmsEmulator();
  },
};

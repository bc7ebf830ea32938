/**
 * Mocha root hooks: stop the shared embedded PostgreSQL (and the shared KMS emulator, if any) once every suite
 * is done, and say how long the test databases took to make (the template's migrations once, then one clone
 * per suite; ./test-database.ts).
 */
import { stopSharedKmsEmulator } from './kms-test-backend.js';
import { databaseTimings, stopTestPostgres } from './test-database.js';

export const mochaHooks = {
  async afterAll(this: unknown) {
    await stopTestPostgres();
    await stopSharedKmsEmulator();
    const t = databaseTimings;
    if (t.templateMs === undefined && t.empty === 0) return;
    const ms = Math.round(t.templateMs ?? 0);
    const template =
      t.templateMs === undefined
        ? 'no template'
        : t.lostRace
          ? `template: built by another run first, ${ms} ms`
          : t.migrations > 0
            ? `template: ${t.migrations} migrations in ${ms} ms`
            : `template: found, ${ms} ms`;
    const clones =
      t.clones > 0 ? `${t.clones} clones, ${Math.round(t.cloneMs / t.clones)} ms each on average` : 'no clones';
    process.stdout.write(`\ntest databases: ${template}; ${clones}; ${t.empty} empty\n`);
  },
};

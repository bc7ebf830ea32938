/**
 * compose.yaml as a compose implementation reads it: `docker-compose config` (Debian's docker-compose 1.29,
 * the oldest implementation people still run; it validates without a container engine) accepts the file
 * with the required variables set, lists its services, and refuses it, naming the variable, without them.
 * Skipped, saying why, where `docker-compose` is not installed (`apt-get install -y docker-compose`).
 * What this cannot show: that the stack starts (that needs an engine).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

describe('compose.yaml through docker-compose config', function () {
  this.timeout(60_000);
  const compose = (env: Record<string, string>, ...args: string[]) =>
    run('docker-compose', ['-f', path.join(ROOT, 'compose.yaml'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    });
  const required = { POSTGRES_PASSWORD: 'compose-config-check', TREASURY_ADMIN_TOKEN: 'compose-config-check' };

  before(async function () {
    const found = await run('docker-compose', ['version', '--short']).then(
      () => true,
      () => false,
    );
    if (!found) {
      console.log('    skipped: docker-compose is not installed (apt-get install -y docker-compose)');
      this.skip();
    }
  });

  it('accepts the file and lists every service', async () => {
    await compose(required, 'config', '--quiet');
    const { stdout } = await compose(required, 'config', '--services');
    assert.deepEqual(stdout.trim().split('\n').sort(), [
      'api-1',
      'api-2',
      'migrate',
      'postgres',
      'proxy',
      'signer',
      'signer-init',
    ]);
  });

  it('refuses it without the required secrets, naming the variable', async () => {
    await assert.rejects(compose({ TREASURY_ADMIN_TOKEN: 'x' }, 'config', '--quiet'), (err: { stderr?: string }) =>
      /POSTGRES_PASSWORD/.test(err.stderr ?? ''),
    );
  });
});

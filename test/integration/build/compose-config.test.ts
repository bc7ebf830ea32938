/**
 * compose.yaml as a compose implementation reads it: `docker-compose config` (Debian's docker-compose 1.29,
 * the oldest implementation people still run; it validates without a container engine) accepts the file
 * with the required variables set, lists its services, and refuses it, naming the variable, without them. The
 * signer is given its token list (its image runs in production mode, which requires one): testnet tokens unless the
 * operator exports TREASURY_SIGNER_ALLOWED_TOKENS, and the signer's configuration accepts it in production mode.
 * Skipped, saying why, where `docker-compose` is not installed (`apt-get install -y docker-compose`).
 * What this cannot show: that the stack starts (that needs an engine).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadSignerConfig } from '../../../signer/config/signer-config.js';
import { TESTNET_ALLOWED_TOKENS } from '../../../signer/config/allowed-tokens.js';

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

  it('gives the signer its token list: testnet only unless exported, which production mode accepts', async () => {
    /** The signer service's TREASURY_SIGNER_ALLOWED_TOKENS as docker-compose resolves it. */
    const tokensFor = async (env: Record<string, string>) => {
      const { stdout } = await compose({ ...required, ...env }, 'config');
      const lines = stdout.split('\n').filter((l) => l.trim().startsWith('TREASURY_SIGNER_ALLOWED_TOKENS:'));
      assert.equal(lines.length, 1, 'the signer, and only it, is given the list');
      return lines[0]!.trim().slice('TREASURY_SIGNER_ALLOWED_TOKENS:'.length).trim();
    };
    const byDefault = await tokensFor({});
    assert.equal(byDefault, TESTNET_ALLOWED_TOKENS);
    const baseUsdc = '8453:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
    assert.equal(await tokensFor({ TREASURY_SIGNER_ALLOWED_TOKENS: baseUsdc }), baseUsdc);

    // The signer image's production mode (NODE_ENV=production) starts on compose's default: testnet tokens only.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-compose-signer-'));
    try {
      const pinFile = path.join(dir, 'user.pin');
      fs.writeFileSync(pinFile, 'compose-pin-1234\n', { mode: 0o600 });
      const config = loadSignerConfig({
        NODE_ENV: 'production',
        TREASURY_SIGNER_SOCKET: path.join(dir, 'signer.sock'),
        TREASURY_PKCS11_PIN_FILE: pinFile,
        TREASURY_SIGNER_ALLOWED_TOKENS: byDefault,
      });
      assert.deepEqual(
        config.invariants.allowedTokens.map((t) => t.chainId),
        [84532],
      );
      assert.ok(!config.invariants.solana.allowedMints.some((m) => m.network.startsWith('solana:5eykt4')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses it without the required secrets, naming the variable', async () => {
    await assert.rejects(compose({ TREASURY_ADMIN_TOKEN: 'x' }, 'config', '--quiet'), (err: { stderr?: string }) =>
      /POSTGRES_PASSWORD/.test(err.stderr ?? ''),
    );
  });
});

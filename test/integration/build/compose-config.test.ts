/**
 * compose.yaml as a compose implementation reads it: `docker-compose config` (Debian's docker-compose 1.29,
 * the oldest implementation people still run; it validates without a container engine) accepts the file
 * with the required variables set, lists its services, and refuses it, naming the variable, without them. The
 * signer is given its token list (its image runs in production mode, which requires one): testnet tokens unless the
 * operator exports TREASURY_SIGNER_ALLOWED_TOKENS, and the signer's configuration accepts it in production mode.
 * The signer is given its policy store — its own role and database, on a network it shares with PostgreSQL only —
 * and the APIs neither that URL, nor that network, nor the signer's or the superuser's password; the signer's
 * configuration, as the image completes it, accepts it in production mode (and refuses the signer without it).
 * Skipped, saying why, where `docker-compose` is not installed (`apt-get install -y docker-compose`).
 * What this cannot show: that the stack starts (that needs an engine); the roles themselves are made and checked on
 * a real server by compose-postgres-init.test.ts.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadSignerConfig, SignerConfigError } from '../../../signer/config/signer-config.js';
import { TESTNET_ALLOWED_TOKENS } from '../../../signer/config/allowed-tokens.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

/** The lines under `key:` at `indent` spaces in docker-compose's normalised output (first match), dedented by it. */
function block(lines: readonly string[], key: string, indent: number): string[] {
  const start = lines.findIndex((l) => l === `${' '.repeat(indent)}${key}:`);
  if (start < 0) return [];
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.length - l.trimStart().length <= indent) break;
    out.push(l.slice(indent + 2));
  }
  return out;
}

/** A resolved service: its environment (name → value) and the networks it is on. */
function resolvedService(config: string, name: string): { env: Map<string, string>; networks: string[] } {
  const service = block(block(config.split('\n'), 'services', 0), name, 0);
  assert.ok(service.length > 0, `service ${name}`);
  const env = new Map(
    block(service, 'environment', 0).map((l) => {
      const at = l.indexOf(':');
      return [
        l.slice(0, at).trim(),
        l
          .slice(at + 1)
          .trim()
          .replace(/^'(.*)'$/, '$1'),
      ] as const;
    }),
  );
  const networks = block(service, 'networks', 0)
    .filter((l) => !l.startsWith(' '))
    .map((l) => l.slice(0, l.indexOf(':')))
    .sort();
  return { env, networks };
}

describe('compose.yaml through docker-compose config', function () {
  this.timeout(60_000);
  const compose = (env: Record<string, string>, ...args: string[]) =>
    run('docker-compose', ['-f', path.join(ROOT, 'compose.yaml'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    });
  const required = {
    POSTGRES_PASSWORD: 'superuser-secret',
    TREASURY_DB_PASSWORD: 'api-db-secret',
    TREASURY_SIGNER_DB_PASSWORD: 'signer-db-secret',
    TREASURY_ADMIN_TOKEN: 'compose-config-check',
  };
  /** The signer image's own ENV that its configuration reads (the Dockerfile's signer stage). */
  const signerImageEnv = (dir: string) => {
    const pinFile = path.join(dir, 'user.pin');
    fs.writeFileSync(pinFile, 'compose-pin-1234\n', { mode: 0o600 });
    return {
      NODE_ENV: 'production',
      TREASURY_SIGNER_SOCKET: path.join(dir, 'signer.sock'),
      TREASURY_PKCS11_PIN_FILE: pinFile,
      TREASURY_SIGNER_LIMITS_STATE_FILE: path.join(dir, 'limits-state.json'),
    };
  };

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
      const { env } = resolvedService((await compose(required, 'config')).stdout, 'signer');
      const config = loadSignerConfig({ ...signerImageEnv(dir), ...Object.fromEntries(env) });
      assert.deepEqual(
        config.invariants.allowedTokens.map((t) => t.chainId),
        [84532],
      );
      assert.ok(!config.invariants.solana.allowedMints.some((m) => m.network.startsWith('solana:5eykt4')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the signer its policy store on a network it shares with PostgreSQL only; the APIs get neither', async () => {
    const config = (await compose(required, 'config')).stdout;
    const signer = resolvedService(config, 'signer');
    assert.equal(
      signer.env.get('TREASURY_SIGNER_DATABASE_URL'),
      'postgres://treasury_signer:signer-db-secret@postgres:5432/treasury_signer',
    );
    assert.deepEqual(signer.networks, ['signer-db']);
    assert.deepEqual(resolvedService(config, 'postgres').networks, ['signer-db', 'treasury']);
    assert.deepEqual(block(block(config.split('\n'), 'networks', 0), 'signer-db', 0), ['internal: true']);
    for (const name of ['api-1', 'api-2', 'migrate']) {
      const service = resolvedService(config, name);
      assert.deepEqual(service.networks, ['treasury'], name);
      assert.equal(service.env.get('DATABASE_URL'), 'postgres://treasury:api-db-secret@postgres:5432/treasury', name);
      assert.ok(!service.env.has('TREASURY_SIGNER_DATABASE_URL'), `${name} is given the signer's store`);
      const values = [...service.env.values()].join('\n');
      for (const secret of ['signer-db-secret', 'superuser-secret'])
        assert.ok(!values.includes(secret), `${name} is given ${secret}`);
    }
    // Only PostgreSQL (which makes the roles) and the signer know the signer's password; only PostgreSQL the superuser's.
    const holders = (secret: string) =>
      ['postgres', 'signer-init', 'signer', 'migrate', 'api-1', 'api-2', 'proxy'].filter((n) =>
        [...resolvedService(config, n).env.values()].some((v) => v.includes(secret)),
      );
    assert.deepEqual(holders('signer-db-secret'), ['postgres', 'signer']);
    assert.deepEqual(holders('superuser-secret'), ['postgres']);

    // As the image completes it, the signer's production configuration takes the store (its watermark beside the
    // limits state file); without it, production mode refuses to start unless owner policies are said to be off.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-compose-signer-'));
    try {
      const withStore = loadSignerConfig({ ...signerImageEnv(dir), ...Object.fromEntries(signer.env) });
      assert.equal(withStore.ownerPolicies?.watermarkFile, path.join(dir, 'store-watermark.json'));
      assert.deepEqual(withStore.ownerPolicies?.placement, { production: true, acceptedRoles: [] });
      signer.env.delete('TREASURY_SIGNER_DATABASE_URL');
      assert.throws(
        () => loadSignerConfig({ ...signerImageEnv(dir), ...Object.fromEntries(signer.env) }),
        (err: unknown) =>
          err instanceof SignerConfigError && err.details.problems[0]!.startsWith('TREASURY_SIGNER_DATABASE_URL:'),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses it without the required secrets, naming the variable', async () => {
    for (const missing of ['POSTGRES_PASSWORD', 'TREASURY_DB_PASSWORD', 'TREASURY_SIGNER_DB_PASSWORD'] as const) {
      const env: Record<string, string> = { ...required };
      delete env[missing];
      await assert.rejects(compose(env, 'config', '--quiet'), (err: { stderr?: string }) =>
        (err.stderr ?? '').includes(`set ${missing}`),
      );
    }
  });
});

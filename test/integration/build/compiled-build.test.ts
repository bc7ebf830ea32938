/**
 * The compiled build (`npm run build`, tsconfig.build.json) runs on plain node: in a temporary directory laid
 * out as the image is (dist/, package.json, node_modules) — a copy of the checkout's dist/ when it is current
 * (`npm test` builds it once, bin/build-freshness.mjs), else compiled there — its migrations applied to an
 * empty PostgreSQL database by dist/src/api/db/migrate-cli.js, then treasury-signer (dist/signer/main.js, on a
 * SoftHSM token) and treasury-api (dist/src/api/main.js, in production mode behind a declared TLS proxy)
 * started with `node` alone — no tsx — and one x402 payment signed and recorded through HTTP. The three
 * entry points there are esbuild bundles (ops/build/bundle-entries.ts): the API, bundled, still finds what lies
 * beside its own modules in the copy (the migrations it checks, the swagger-ui-dist assets of /docs). And the
 * `xx` CLI is one bundle (dist/cli/) that imports nothing but Node's built-ins and its own chunks, so a command
 * resolves nothing under node_modules, and it runs from the copy.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildIsCurrent } from '../../../bin/build-freshness.mjs';
import { bundleAll, bundleCli, OPTIONAL_ADDONS } from '../../../ops/build/bundle-entries.js';
import { recoverAuthorizationSigner } from '../../support/recover-authorization.js';
import { listPendingMigrations } from '../../../src/api/db/knex-client.js';
import { paymentRequirements, SELLER_ADDRESS } from '../../builders/payment-requirements.js';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

describe('compiled build: API and signer on plain node against PostgreSQL and SoftHSM', function () {
  this.timeout(300_000);
  let out: string;
  let dist: string;
  let db: TestDatabase;
  let signer: TestSigner | undefined;
  let api: ApiProcess | undefined;
  const adminToken = randomBytes(32).toString('base64url');

  before(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-build-'));
    dist = path.join(out, 'dist');
    const entries = ['dist/src/api/main.js', 'dist/signer/main.js', 'dist/cli/main.js'];
    if (entries.every((f) => buildIsCurrent(f))) fs.cpSync(path.join(ROOT, 'dist'), dist, { recursive: true });
    // What `npm run build` runs, with the output elsewhere; node finds the packages through the symlink.
    else {
      await run(
        process.execPath,
        [path.join(ROOT, 'node_modules/typescript-7/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dist],
        { cwd: ROOT },
      );
      await bundleAll(dist);
    }
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(out, 'node_modules'));
    // As in the image: package.json beside dist/ says the files are ES modules.
    fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(out, 'package.json'));
    db = await createTestDatabase({ migrate: false });
  });
  after(async () => {
    await api?.stop();
    await signer?.stop();
    await db?.drop();
    if (out) fs.rmSync(out, { recursive: true, force: true });
  });

  it('holds JavaScript only: no TypeScript sources, tests, benches or sandbox; the entry points are bundles', () => {
    const files = filesUnder(dist);
    for (const entry of ['src/api/main.js', 'signer/main.js', 'src/gate/main.js'])
      assert.ok(fs.statSync(path.join(dist, entry)).size > 500_000, `${entry} holds its dependencies' code`);
    assert.ok(files.includes(path.join('src', 'api', 'main.js')));
    assert.ok(files.includes(path.join('signer', 'main.js')));
    assert.ok(files.includes(path.join('cli', 'main.js')));
    assert.deepEqual(
      files.filter((f) => /\.ts$/.test(f) || /(^|\/)(test|bench|sandbox|kms-emulator)\//.test(f)),
      [],
    );
  });

  it('the CLI is one bundle: it imports only Node built-ins and its own chunks, and answers from the copy', async () => {
    const bundled = await bundleCli(path.join(out, 'cli-bundle-check'));
    const imports = Object.values(bundled.outputs).flatMap((o) => o.imports);
    assert.ok(
      imports.some((i) => !i.external),
      'the entry imports its chunks',
    );
    assert.deepEqual(
      imports
        .filter((i) => i.external && !isBuiltin(i.path))
        .filter((i) => !(i.kind === 'require-call' && OPTIONAL_ADDONS.includes(i.path)))
        .map((i) => i.path),
      [],
      'imports left to node_modules at run time',
    );
    const { stdout } = await run(process.execPath, [path.join(dist, 'cli', 'main.js'), '--version'], {
      env: { PATH: process.env.PATH, HOME: out, NO_COLOR: '1' },
    });
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(stdout.trim(), version);
  });

  it('migrates an empty database from the build, under the names the sources use', async () => {
    const env = { ...process.env, DATABASE_URL: db.connectionString };
    const { stdout } = await run(process.execPath, [path.join(dist, 'src/api/db/migrate-cli.js'), 'latest'], { env });
    const result = JSON.parse(stdout) as { applied: string[]; pending: string[] };
    const sources = fs.readdirSync(path.join(ROOT, 'migrations')).filter((f) => f.endsWith('.ts'));
    assert.deepEqual(result.applied.sort(), sources.sort());
    assert.deepEqual(result.pending, []);
    // The sources agree: nothing pending for them either.
    assert.deepEqual(await listPendingMigrations(db.knex), []);
  });

  it('starts the signer and the API from dist/ with node alone and signs a payment', async () => {
    signer = await startTestSigner({ nodeArgs: [path.join(dist, 'signer/main.js')] });
    api = await startApiProcess(
      db,
      signer,
      {
        NODE_ENV: 'production',
        TREASURY_BEHIND_TLS_PROXY: '1',
        TREASURY_PUBLIC_URL: 'https://treasury.example.com',
        TREASURY_ADMIN_TOKEN: adminToken,
        TREASURY_METRICS_ON_PUBLIC_LISTENER: '1',
      },
      { nodeArgs: [path.join(dist, 'src/api/main.js')], logs: true },
    );
    for (const child of [signer.child, api.child])
      assert.ok(!child.spawnargs.some((a) => a.includes('tsx')), `${child.spawnargs.join(' ')} uses tsx`);
    assert.match(api.logs(), /"production":true/);

    const call = async (method: string, route: string, token: string, body?: unknown) => {
      const res = await fetch(`${api!.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const minted = await call('POST', '/v1/treasury', adminToken, { owner_type: 'agent', owner_id: 'built' });
    assert.equal(minted.status, 201, JSON.stringify(minted.body));
    const key = minted.body.api_key as string;
    const wallet = await call('POST', '/v1/wallets', key, { policy: { per_tx_cap_usd: '1' } });
    assert.equal(wallet.status, 201, JSON.stringify(wallet.body));
    const paid = await call('POST', `/v1/wallets/${wallet.body.id}/pay`, key, {
      payment_requirements: paymentRequirements({ amount: '10000', maxTimeoutSeconds: 300 }),
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    // A path the bundle finds from its module's own place in dist/: swagger-ui-dist, resolved from there.
    const asset = await fetch(`${api.url}/docs/swagger-ui.css`);
    assert.equal(asset.status, 200);
    assert.ok((await asset.text()).length > 1000, 'the swagger-ui stylesheet');
    const { authorization, signature } = paid.body;
    assert.equal(await recoverAuthorizationSigner(authorization, signature), wallet.body.address);
    assert.equal(authorization.to, SELLER_ADDRESS);
    const row = await db.knex('authorizations').where({ id: paid.body.authorization_id }).first();
    assert.equal(row.signature, signature);
    assert.equal(row.status, 'signed');
  });

  it("the signer image's health check answers from the build: 0 with the signer, 1 without", async () => {
    assert.ok(signer, 'the signer of the previous test');
    const check = path.join(dist, 'signer/health-check.js');
    const ok = await run(process.execPath, [check], {
      env: { PATH: process.env.PATH, TREASURY_SIGNER_SOCKET: signer.socketPath },
    });
    assert.match(ok.stdout, /signer healthy \(backend (pkcs11|aws-kms)/);
    await assert.rejects(
      run(process.execPath, [check], {
        env: { PATH: process.env.PATH, TREASURY_SIGNER_SOCKET: path.join(out, 'absent.sock') },
      }),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /signer unhealthy/.test(err.stderr ?? ''),
    );
  });
});

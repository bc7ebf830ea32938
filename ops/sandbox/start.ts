/**
 * `npm start`: the local sandbox on embedded defaults, everything under ./.treasury/ (git-ignored):
 * embedded PostgreSQL (unless DATABASE_URL is set) → migrations (their own step) → SoftHSM token and
 * root KEK (installed/initialised when missing) → local chain (anvil from npm, chain id 84532, the
 * EIP-3009 test USDC at the Base Sepolia USDC address, a faucet, an x402 facilitator on the official
 * packages; TREASURY_SANDBOX_CHAIN=0 skips it) → treasury-signer → treasury-api → a demo Koa seller with
 * one paid route behind our x402 middleware → a demo origin with no payment code, registered as a managed-proxy
 * (`mpp`) seller, and treasury-gate in front of it (docs/gate.md). Writes
 * ./.treasury/sandbox.json (mode 0600) once ready and stops everything on Ctrl-C / SIGTERM.
 * Ports: TREASURY_SANDBOX_{RPC,FAUCET,FACILITATOR,SELLER,KMS,GATE,ORIGIN}_PORT (8545, 8547, 4022, 8403, 4599,
 * 8404, 8405; 0 = any free port).
 *
 * TREASURY_SANDBOX_KEY_BACKEND=aws-kms runs the signer on the AWS KMS key backend against the KMS emulator
 * (ops/kms-emulator/, a TEST DOUBLE started in this process, instead of SoftHSM): the signer reaches it
 * through TREASURY_KMS_ENDPOINT with the emulator's public test credentials in AWS_* variables (the SDK's
 * default chain, as in production; the user's own AWS profile and endpoint variables are kept from it).
 * The emulator keeps keys in its memory only, so wallets made in one run cannot sign after a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { createKnex, migrateLatest } from '../../src/api/db/knex-client.js';
import { initSoftHsmToken } from '../softhsm/init-token.js';
import { startKmsEmulator, type KmsEmulator } from '../kms-emulator/kms-emulator.js';
import { AWS_VARIABLES_STEERING_AWAY_FROM_THE_EMULATOR as AWS_VARIABLES_KEPT_FROM_THE_SIGNER } from '../kms-emulator/steering-aws-variables.js';
import { startLocalChain, type LocalChain } from './chain/local-chain.js';
import { anvilDevAccount } from './chain/anvil-dev-accounts.js';
import { startDemoSeller, type DemoSeller } from './demo-seller.js';
import { startDemoOrigin, type DemoOrigin } from './demo-origin.js';
import { registerDemoGateSeller } from './demo-gate.js';
import { dashboardIsStale, ensureDashboardBuilt } from '../dashboard/build-dashboard.js';
import { nodeArgsFor } from '../../bin/build-freshness.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dataDir = path.resolve(process.env.TREASURY_DATA_DIR ?? path.join(ROOT, '.treasury'));
const apiPort = Number(process.env.TREASURY_PORT ?? 8402);
const apiHost = process.env.TREASURY_HOST ?? '127.0.0.1';
const pgPort = Number(process.env.TREASURY_EMBEDDED_PG_PORT ?? 54329);

/** A sandbox port from the environment: unset → the default; 0 → any free port. */
function sandboxPort(name: string, fallback: number): number | undefined {
  const raw = process.env[name];
  const port = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`${name} must be a port number (0 = any free port)`);
  return port === 0 ? undefined : port;
}

/** The signer's key backend: SoftHSM (default) or AWS KMS on the emulator. */
function sandboxKeyBackend(): 'pkcs11' | 'aws-kms' {
  const raw = process.env.TREASURY_SANDBOX_KEY_BACKEND ?? 'pkcs11';
  if (raw !== 'pkcs11' && raw !== 'aws-kms') throw new Error('TREASURY_SANDBOX_KEY_BACKEND must be pkcs11 or aws-kms');
  return raw;
}

const children: ChildProcess[] = [];
const childNames = new WeakMap<ChildProcess, string>();
let localChain: LocalChain | undefined;
let demoSeller: DemoSeller | undefined;
let demoOrigin: DemoOrigin | undefined;
let kmsEmulator: KmsEmulator | undefined;
let stopDatabase: () => Promise<void> = async () => undefined;
let stopping = false;

function say(line: string): void {
  process.stdout.write(line + '\n');
}

function readOrCreateSecret(file: string, make: () => string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const value = make();
  fs.writeFileSync(file, value + '\n', { mode: 0o600 });
  return value;
}

/**
 * Spawns an entry point — compiled when `npm run build` is current, else through tsx (bin/build-freshness.mjs,
 * the rule bin/xx.mjs follows) — and resolves once a log line matches `ready` (its message, its fields). */
function startProcess(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  ready: (msg: string, fields: Record<string, unknown>) => boolean,
): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgsFor(entry), {
      cwd: ROOT,
      env: { ...process.env, ...env, TREASURY_EXIT_WITH_PARENT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    childNames.set(child, name);
    const logFile = fs.createWriteStream(path.join(dataDir, `${name}.log`), { flags: 'a', mode: 0o600 });
    let isReady = false;
    const timer = setTimeout(
      () => reject(new Error(`${name} did not become ready within 60 s; see ${path.join(dataDir, `${name}.log`)}`)),
      60_000,
    );
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        logFile.write(line + '\n');
        let msg = line;
        let fields: Record<string, unknown> = {};
        try {
          fields = JSON.parse(line) as Record<string, unknown>;
          msg = String(fields.msg ?? line);
        } catch {
          /* plain text line */
        }
        if (!isReady && ready(msg, fields)) {
          isReady = true;
          clearTimeout(timer);
          resolve(child);
        }
      });
    }
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!isReady)
        reject(
          new Error(
            `${name} exited (code ${code}, signal ${signal}) before it was ready; see ${path.join(dataDir, `${name}.log`)}`,
          ),
        );
      else if (!stopping) {
        say(`${name} exited unexpectedly (code ${code}, signal ${signal}); stopping the sandbox`);
        void shutdown(1);
      }
    });
  });
}

/** Waits for one shutdown step, at most 20 s, so one stuck part cannot keep the sandbox from stopping. */
async function bounded(step: Promise<void> | undefined, what: string): Promise<void> {
  if (!step) return;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = await Promise.race([
    step.then(
      () => false,
      () => false,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 20_000))),
  ]);
  clearTimeout(timer);
  if (gaveUp) say(`• ${what} did not stop within 20 s; moving on`);
}

async function shutdown(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  const began = Date.now();
  const took = () => `${((Date.now() - began) / 1000).toFixed(1)} s`;
  say('• stopping');
  // The demo seller first: its last ledger reports need the API, which stops with the children below.
  await bounded(demoSeller?.stop(), 'the demo seller');
  for (const child of [...children].reverse()) {
    const name = childNames.get(child) ?? 'a child process';
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    const killed = await new Promise<boolean>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve(false);
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(true);
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve(false);
      });
    });
    say(killed ? `• ${name} did not stop within 10 s; killed (${took()})` : `• ${name} stopped (${took()})`);
  }
  await bounded(demoOrigin?.stop(), 'the demo origin');
  if (kmsEmulator) {
    await bounded(kmsEmulator.close(), 'the KMS emulator');
    say(`• KMS emulator stopped (${took()})`);
  }
  if (localChain) {
    await bounded(localChain.stop(), 'the local chain');
    say(`• local chain stopped (${took()})`);
  }
  await bounded(stopDatabase(), 'PostgreSQL');
  fs.rmSync(path.join(dataDir, 'sandbox.json'), { force: true });
  say(`sandbox stopped (${took()})`);
  process.exit(code);
}

async function main(): Promise<void> {
  // When npm has already gone (Ctrl-C reaches it too), writing to its closed pipe must not kill the shutdown.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o711 });
  process.on('SIGINT', () => void shutdown(0));
  process.on('SIGTERM', () => void shutdown(0));
  // npm does not forward SIGTERM to its script: when our parent goes away, stop everything too.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0);
  }, 1000).unref();

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    say(`• starting embedded PostgreSQL on 127.0.0.1:${pgPort} (${path.join(dataDir, 'pg')})`);
    const { startEmbeddedPostgres } = await import('../../src/api/db/embedded-postgres.js');
    const pg = await startEmbeddedPostgres({ dir: path.join(dataDir, 'pg'), port: pgPort });
    stopDatabase = () => pg.stop();
    databaseUrl = pg.connectionString;
  } else {
    say('• using DATABASE_URL');
  }

  const knex = createKnex(databaseUrl, 2, 'treasury-sandbox');
  try {
    const applied = await migrateLatest(knex);
    say(`• migrations: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}`);
  } finally {
    await knex.destroy();
  }

  const keyBackend = sandboxKeyBackend();
  let signerBackendEnv: NodeJS.ProcessEnv;
  if (keyBackend === 'aws-kms') {
    const kmsPort = sandboxPort('TREASURY_SANDBOX_KMS_PORT', 4599);
    say(
      '• starting the KMS emulator (a TEST DOUBLE: it keeps the wallet keys in its own memory, lost when the sandbox stops)',
    );
    const pino = (await import('pino')).default;
    const kmsLog = pino(
      { level: 'info', name: 'kms-emulator' },
      pino.destination({ dest: path.join(dataDir, 'kms-emulator.log'), append: true, mkdir: true, sync: false }),
    );
    kmsEmulator = await startKmsEmulator({ logger: kmsLog, ...(kmsPort === undefined ? {} : { port: kmsPort }) });
    const client = kmsEmulator.clientEnv();
    signerBackendEnv = {
      TREASURY_KEY_BACKEND: 'aws-kms',
      TREASURY_KMS_REGION: kmsEmulator.region,
      TREASURY_KMS_ENDPOINT: kmsEmulator.url,
      TREASURY_KMS_TOMBSTONE_FILE: path.join(dataDir, 'kms-tombstones.json'),
      ...Object.fromEntries(AWS_VARIABLES_KEPT_FROM_THE_SIGNER.map((name) => [name, undefined])),
      AWS_REGION: client.AWS_REGION,
      AWS_ACCESS_KEY_ID: client.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: client.AWS_SECRET_ACCESS_KEY,
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  } else {
    say('• SoftHSM token and root KEK');
    const hsm = await initSoftHsmToken({ dir: path.join(dataDir, 'softhsm') });
    signerBackendEnv = {
      TREASURY_KEY_BACKEND: 'pkcs11',
      TREASURY_PKCS11_MODULE: hsm.modulePath,
      TREASURY_PKCS11_TOKEN_LABEL: hsm.tokenLabel,
      TREASURY_PKCS11_KEK_LABEL: hsm.kekLabel,
      TREASURY_PKCS11_PIN_FILE: hsm.pinFile,
      SOFTHSM2_CONF: hsm.softhsm2Conf,
    };
  }

  if (process.env.TREASURY_SANDBOX_CHAIN !== '0') {
    say('• starting the local chain (anvil, test USDC, faucet, x402 facilitator)');
    const anvilPort = sandboxPort('TREASURY_SANDBOX_RPC_PORT', 8545);
    const faucetPort = sandboxPort('TREASURY_SANDBOX_FAUCET_PORT', 8547);
    const facilitatorPort = sandboxPort('TREASURY_SANDBOX_FACILITATOR_PORT', 4022);
    const pino = (await import('pino')).default;
    const chainLog = pino(
      { level: 'info' },
      pino.destination({ dest: path.join(dataDir, 'chain.log'), append: true, mkdir: true, sync: false }),
    );
    localChain = await startLocalChain({
      anvilLogFile: path.join(dataDir, 'anvil.log'),
      cacheDir: path.join(dataDir, 'cache'),
      logger: chainLog,
      ...(anvilPort === undefined ? {} : { anvilPort }),
      ...(faucetPort === undefined ? {} : { faucetPort }),
      ...(facilitatorPort === undefined ? {} : { facilitatorPort }),
    });
  }

  const signerSocket = path.join(dataDir, 'signer.sock');
  say('• starting treasury-signer');
  await startProcess(
    'signer',
    'signer/main.ts',
    {
      TREASURY_SIGNER_SOCKET: signerSocket,
      TREASURY_SIGNER_BACKEND: undefined,
      ...signerBackendEnv,
    },
    (msg) => msg === 'signer ready',
  );

  const adminToken =
    process.env.TREASURY_ADMIN_TOKEN ??
    readOrCreateSecret(path.join(dataDir, 'admin-token'), () => `xx_admin_${randomBytes(32).toString('base64url')}`);
  if (dashboardIsStale()) {
    say('• building the dashboard (npm run build:dashboard)');
    // A failed build leaves the API running: /dashboard/ answers 503 dashboard_not_built until it is built.
    await ensureDashboardBuilt().catch((err: unknown) =>
      say(
        `• the dashboard did not build (${err instanceof Error ? err.message : String(err)}); the API runs without it`,
      ),
    );
  }
  say('• starting treasury-api');
  await startProcess(
    'api',
    'src/api/main.ts',
    {
      DATABASE_URL: databaseUrl,
      TREASURY_SIGNER_SOCKET: signerSocket,
      TREASURY_ADMIN_TOKEN: adminToken,
      TREASURY_PORT: String(apiPort),
      TREASURY_HOST: apiHost,
      TREASURY_DATA_DIR: dataDir,
      TREASURY_VERIFY_ALLOW_PRIVATE: '1',
      ...(localChain
        ? {
            TREASURY_RPC_URLS: JSON.stringify({ [localChain.network]: localChain.rpcUrl }),
            // Payouts to platform_mor sellers (the demo seller) are settled by the local facilitator.
            TREASURY_FACILITATOR_URL: localChain.facilitatorUrl,
          }
        : {}),
    },
    (msg) => msg === 'treasury-api ready',
  );

  const apiUrl = `http://${apiHost}:${apiPort}`;
  if (localChain) {
    say('• starting the demo seller (GET /joke, 0.01 USDC)');
    const sellerPort = sandboxPort('TREASURY_SANDBOX_SELLER_PORT', 8403);
    demoSeller = await startDemoSeller({
      apiUrl,
      publicUrl: process.env.TREASURY_PUBLIC_URL ?? apiUrl,
      facilitatorUrl: localChain.facilitatorUrl,
      chainId: localChain.chainId,
      network: localChain.network,
      payToKey: anvilDevAccount(2).privateKey,
      dataDir,
      ...(sellerPort === undefined ? {} : { port: sellerPort }),
    });
  }
  let gate: { url: string; demoUrl: string; sellerId: string; originUrl: string } | undefined;
  if (localChain) {
    say('• starting the demo origin (no payment code) and treasury-gate in front of it (GET /forecast, 0.01 USDC)');
    const originPort = sandboxPort('TREASURY_SANDBOX_ORIGIN_PORT', 8405);
    demoOrigin = await startDemoOrigin(originPort === undefined ? {} : { port: originPort });
    const gateSeller = await registerDemoGateSeller({
      apiUrl,
      publicUrl: process.env.TREASURY_PUBLIC_URL ?? apiUrl,
      chainId: localChain.chainId,
      originUrl: demoOrigin.url,
      serveVerification: demoOrigin.serveVerification,
      payToKey: anvilDevAccount(20).privateKey,
      dataDir,
    });
    const gatePort = sandboxPort('TREASURY_SANDBOX_GATE_PORT', 8404);
    let gateUrl = '';
    await startProcess(
      'gate',
      'src/gate/main.ts',
      {
        GATE_HOST: '127.0.0.1',
        GATE_PORT: String(gatePort ?? 0),
        GATE_TOKEN: gateSeller.gatePat,
        GATE_API_URL: apiUrl,
        GATE_NETWORK: localChain.network,
        FACILITATOR_URL: localChain.facilitatorUrl,
        FACILITATOR_ADDRESS: localChain.facilitatorAddress,
        GATE_ALLOW_PRIVATE_ORIGINS: '1', // the demo origin is on loopback
      },
      (msg, fields) => {
        if (msg !== 'treasury-gate ready') return false;
        gateUrl = String(fields.url);
        return true;
      },
    );
    // Ready once it has read its catalogue (the platform is up, so the first read answers at once).
    for (let i = 0; i < 100; i++) {
      if (
        (await fetch(`${gateUrl}/readyz`).then(
          (r) => r.status,
          () => 0,
        )) === 200
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    gate = {
      url: gateUrl,
      demoUrl: `${gateUrl}/${gateSeller.slug}/forecast`,
      sellerId: gateSeller.sellerId,
      originUrl: demoOrigin.url,
    };
  }
  const dashboardUrl = (process.env.TREASURY_DASHBOARD_URL ?? `${apiUrl}/dashboard`).replace(/\/+$/, '');
  const sandboxFile = path.join(dataDir, 'sandbox.json');
  // Written aside and renamed into place: whoever waits for the file (xx, scripts, tests) never reads it half
  // written — the file appears whole or not at all.
  const partial = `${sandboxFile}.${process.pid}.tmp`;
  fs.writeFileSync(
    partial,
    JSON.stringify(
      {
        api_url: apiUrl,
        admin_token: adminToken,
        signer_socket: signerSocket,
        database: process.env.DATABASE_URL ? 'external' : 'embedded',
        key_backend: keyBackend,
        ...(kmsEmulator
          ? { kms_endpoint: kmsEmulator.url, kms_emulator: 'test-double', kms_region: kmsEmulator.region }
          : {}),
        metrics_url: `${apiUrl}/metrics`,
        dashboard_url: dashboardUrl,
        ...(localChain
          ? {
              rpc_url: localChain.rpcUrl,
              chain_id: localChain.chainId,
              network: localChain.network,
              usdc: localChain.usdc,
              facilitator_url: localChain.facilitatorUrl,
              facilitator_address: localChain.facilitatorAddress,
              faucet_url: localChain.faucetUrl,
              permit2: localChain.permit2,
              upto_proxy: localChain.uptoProxy,
            }
          : {}),
        ...(demoSeller
          ? {
              demo_seller_url: `${demoSeller.url}/joke`,
              demo_seller_id: demoSeller.sellerId,
              demo_seller_pay_to: demoSeller.payTo,
              demo_seller_collect_to: demoSeller.collectTo,
            }
          : {}),
        ...(gate
          ? {
              gate_url: gate.url,
              gate_demo_url: gate.demoUrl,
              gate_demo_seller_id: gate.sellerId,
              gate_demo_origin_url: gate.originUrl,
            }
          : {}),
        started_at: new Date().toISOString(),
      },
      null,
      2,
    ) + '\n',
    { mode: 0o600 },
  );
  fs.chmodSync(partial, 0o600);
  fs.renameSync(partial, sandboxFile);
  say('');
  say(`Treasury is running at ${apiUrl}`);
  say(`  operator token : ${adminToken}`);
  say(`  dashboard      : ${dashboardUrl}/   (sign in with a browser wallet, or run \`xx dashboard\`)`);
  say(`  metrics        : ${apiUrl}/metrics   readiness: ${apiUrl}/readyz`);
  say(
    kmsEmulator
      ? `  key backend    : aws-kms on the KMS emulator at ${kmsEmulator.url} (TEST DOUBLE: keys in its memory; faults: ${kmsEmulator.url}/__emulator/faults)`
      : '  key backend    : pkcs11 (SoftHSM)',
  );
  if (localChain) {
    say(`  chain          : ${localChain.rpcUrl} (chain id ${localChain.chainId}, test USDC ${localChain.usdc})`);
    say(`  facilitator    : ${localChain.facilitatorUrl}`);
    if (demoSeller) {
      say(`  demo seller    : ${demoSeller.url}/joke (402 until paid)`);
      say(
        `  merchant of record: buyers pay ${demoSeller.collectTo} (held by Treasury); a payout flush moves it to ${demoSeller.payTo}`,
      );
    }
    if (gate) say(`  gate           : ${gate.demoUrl} (402 until paid; origin ${gate.originUrl} has no payment code)`);
    say(
      `  faucet         : curl -s -X POST ${localChain.faucetUrl} -H 'content-type: application/json' -d '{"address":"0x…","amount_usd":"10"}'`,
    );
  }
  say(`  sandbox file   : ${sandboxFile}`);
  say(
    `  try            : curl -s -X POST ${apiUrl}/v1/treasury -H "Authorization: Bearer $(jq -r .admin_token ${sandboxFile})" -H 'content-type: application/json' -d '{"owner_type":"agent","owner_id":"demo"}'`,
  );
  say('Press Ctrl-C to stop.');
}

main().catch(async (err: unknown) => {
  process.stderr.write(`sandbox failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  await shutdown(1);
});

/**
 * Runs the README's first command, `npm start`, as users do: its own process group, a temporary data
 * directory, free ports, embedded defaults. Resolves once `sandbox.json` is written; `stop()` sends Ctrl-C
 * (SIGINT to the group) and waits for the exit, then SIGKILLs whatever is left. payDemoSeller pays the
 * sandbox's demo seller from a Treasury wallet as a buyer does; sandboxCliEnv is the environment of an `xx`
 * user of the sandbox.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodePaymentRequired, encodePaymentPayload } from '../../src/x402/header-codec.js';
import { compileTestUsdc, DEFAULT_CACHE_DIR } from '../../ops/sandbox/chain/compile-test-usdc.js';
import { compileUptoContracts } from '../../ops/sandbox/chain/compile-upto-contracts.js';
import { spawnDetached } from './detached-child.js';
import { freePort } from './test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface SandboxInfo {
  api_url: string;
  admin_token: string;
  /** Where the API serves the dashboard (no trailing slash). */
  dashboard_url: string;
  rpc_url: string;
  chain_id: number;
  usdc: string;
  facilitator_url: string;
  /** The facilitator's address, which `upto` witnesses name. */
  facilitator_address: string;
  faucet_url: string;
  demo_seller_url: string;
  demo_seller_id: string;
  /** The demo seller's proven pay-to, and the collection wallet Treasury holds for it (its buyers pay there). */
  demo_seller_pay_to: `0x${string}`;
  demo_seller_collect_to: `0x${string}`;
  /** The gate (docs/gate.md) and a paid URL through it to the demo origin, which has no payment code. */
  gate_url: string;
  gate_demo_url: string;
  gate_demo_seller_id: string;
  /** The demo origin itself (its `/__seen-headers` lists the header names it received). */
  gate_demo_origin_url: string;
  /** The offline Solana chain (absent with TREASURY_SANDBOX_SOLANA=0): its RPC, devnet's CAIP-2 id, the USDC mint. */
  solana_rpc_url?: string;
  solana_network?: string;
  solana_usdc_mint?: string;
  /** Its official x402 SVM facilitator and that facilitator's fee payer (base58). */
  solana_facilitator_url?: string;
  solana_fee_payer?: string;
  /** POST {address (base58), amount_usd}: test USDC to the address's associated token account. */
  solana_faucet_url?: string;
  /** An official x402 seller charging $0.01 USDC `exact` on the Solana chain, and its pay-to (base58). */
  solana_demo_seller_url?: string;
  solana_demo_seller_pay_to?: string;
  /** The signer's key backend (TREASURY_SANDBOX_KEY_BACKEND). */
  key_backend: 'pkcs11' | 'aws-kms';
  /** With aws-kms: the KMS emulator's URL (a test double), and its region. */
  kms_endpoint?: string;
  kms_emulator?: 'test-double';
  kms_region?: string;
}

export interface RunningSandbox {
  dataDir: string;
  sandboxFile: string;
  info: SandboxInfo;
  child: ChildProcess;
  /** Everything npm start printed so far. */
  output(): string;
  /** The last lines of each process's own log in the data directory (api, signer, chain, anvil, PostgreSQL), for failure messages. */
  logs(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Ctrl-C, wait for npm's exit and the sandbox's "sandbox stopped" line (bounded), then SIGKILL what is left. Safe to call twice. */
  stop(): Promise<void>;
}

/** The keystore passphrase the CLI tests seal their seeds with (XX_KEYSTORE_PASSPHRASE). */
export const CLI_PASSPHRASE = 'correct horse battery staple';

/** A fresh, empty temporary HOME for one `xx` run or user. */
export function freshCliHome(name: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `xx-${name}-`));
}

/**
 * The environment of an `xx` user of this sandbox: a fresh HOME (and XX_HOME below it), the sandbox's data
 * directory, the test passphrase with a cheap scrypt cost, no colours.
 */
export function sandboxCliEnv(sandbox: RunningSandbox, name: string): Record<string, string> {
  const home = freshCliHome(name);
  return {
    HOME: home,
    XX_HOME: path.join(home, '.xx'),
    TREASURY_DATA_DIR: sandbox.dataDir,
    XX_KEYSTORE_PASSPHRASE: CLI_PASSPHRASE,
    XX_KEYSTORE_SCRYPT_LOG_N: '12',
    NO_COLOR: '1',
  };
}

/**
 * Puts the compiled sandbox contracts (TestUsdc, Permit2 and the upto proxy) in a fresh data directory's cache,
 * as a user's ./.treasury/cache holds them after the first `npm start`: compiled once into the repository's
 * cache (DEFAULT_CACHE_DIR, which `npm test` fills before the suites start), then copied, so that no sandbox
 * loads solc and compiles again. The compilers themselves are tested by test/integration/chain/.
 */
function seedContractCache(dataDir: string): void {
  const usdc = compileTestUsdc();
  const upto = compileUptoContracts();
  const cacheDir = path.join(dataDir, 'cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  for (const [prefix, key] of [
    ['test-usdc', usdc.cacheKey],
    ['upto-contracts', upto.cacheKey],
  ] as const) {
    const name = `${prefix}-${key.slice(0, 16)}.json`;
    fs.copyFileSync(path.join(DEFAULT_CACHE_DIR, name), path.join(cacheDir, name));
  }
}

export async function startSandbox(extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningSandbox & { apiPort: number }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-sandbox-'));
  fs.chmodSync(dataDir, 0o755);
  seedContractCache(dataDir);
  const [apiPort, pgPort] = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TREASURY_DATA_DIR: dataDir,
    TREASURY_PORT: String(apiPort),
    TREASURY_EMBEDDED_PG_PORT: String(pgPort),
    TREASURY_SANDBOX_RPC_PORT: '0',
    TREASURY_SANDBOX_FAUCET_PORT: '0',
    TREASURY_SANDBOX_FACILITATOR_PORT: '0',
    TREASURY_SANDBOX_SELLER_PORT: '0',
    TREASURY_SANDBOX_GATE_PORT: '0',
    TREASURY_SANDBOX_ORIGIN_PORT: '0',
    TREASURY_SANDBOX_SOLANA_RPC_PORT: '0',
    TREASURY_SANDBOX_SOLANA_FACILITATOR_PORT: '0',
    TREASURY_SANDBOX_SOLANA_FAUCET_PORT: '0',
    TREASURY_SANDBOX_SOLANA_SELLER_PORT: '0',
    ...extraEnv,
  };
  delete env.DATABASE_URL;
  delete env.TREASURY_ADMIN_TOKEN;
  const { child, output, exited } = spawnDetached('npm', ['start', '--silent'], { cwd: ROOT, env });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    try {
      process.kill(-child.pid!, 'SIGINT');
    } catch {
      // already gone
    }
    // npm may exit before the sandbox has finished stopping: wait for its last line too.
    await Promise.race([exited, sleep(60_000)]);
    for (let i = 0; i < 600 && !/sandbox stopped/.test(output()); i++) await sleep(100);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const sandboxFile = path.join(dataDir, 'sandbox.json');
  for (let i = 0; i < 1800 && !fs.existsSync(sandboxFile); i++) {
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  if (!fs.existsSync(sandboxFile)) {
    await stop();
    throw new Error(`sandbox.json never appeared:\n${output()}`);
  }
  let info: SandboxInfo;
  try {
    info = JSON.parse(fs.readFileSync(sandboxFile, 'utf8')) as SandboxInfo;
  } catch (err) {
    // Stop what started, so that a failed start leaves no sandbox (PostgreSQL, anvil, the API) running.
    await stop();
    throw new Error(
      `sandbox.json is not readable JSON: ${err instanceof Error ? err.message : String(err)}\n${output()}`,
    );
  }
  // sandbox.json is in place before the summary is printed, and the pipe may deliver the lines later still:
  // wait for the summary's last line, so that a test reading output() sees the whole of it.
  for (let i = 0; i < 200 && !/Press Ctrl-C to stop\./.test(output()) && child.exitCode === null; i++) await sleep(50);
  return {
    dataDir,
    sandboxFile,
    info,
    child,
    output,
    logs: () => logTails(dataDir),
    exited,
    stop,
    apiPort,
  };
}

function logTails(dataDir: string, lines = 15): string {
  const files = fs
    .readdirSync(dataDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.log'))
    .sort();
  return files
    .map((f) => {
      const text = fs.readFileSync(path.join(dataDir, f), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
      return `--- ${f} (last ${lines} lines)\n${text}`;
    })
    .join('\n');
}

/**
 * Pays the sandbox's demo seller from a Treasury wallet: its 402 challenge, Treasury's signature for the first
 * entry (POST /v1/wallets/:id/pay, asserted 200; `detail` adds to the failure message), the retry carrying
 * it. Resolves with the seller's answer to the retry.
 */
export async function payDemoSeller(
  info: Pick<SandboxInfo, 'api_url' | 'demo_seller_url'>,
  walletId: string,
  apiKey: string,
  detail: () => string = () => '',
): Promise<Response> {
  const challenge = await fetch(info.demo_seller_url);
  assert.equal(challenge.status, 402);
  const required = decodePaymentRequired(challenge.headers.get('payment-required')!);
  const signed = await fetch(`${info.api_url}/v1/wallets/${walletId}/pay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ payment_requirements: required.accepts[0] }),
  });
  assert.equal(signed.status, 200, `${await signed.clone().text()}${detail()}`);
  const { authorization, signature } = (await signed.json()) as {
    authorization: Record<string, string>;
    signature: string;
  };
  const header = encodePaymentPayload({
    x402Version: 2,
    resource: required.resource,
    accepted: required.accepts[0]!,
    payload: { signature, authorization },
  } as never);
  return fetch(info.demo_seller_url, { headers: { 'payment-signature': header } });
}

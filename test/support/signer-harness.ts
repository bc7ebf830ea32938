/**
 * Starts a real treasury-signer child process (`node --import tsx signer/main.ts`) on a throwaway SoftHSM
 * token with its own SOFTHSM2_CONF, for integration tests, the API tests and benchmarks; with
 * TREASURY_TEST_KEY_BACKEND=aws-kms, on the AWS KMS key backend against the test process's shared KMS
 * emulator instead (./kms-test-backend.ts; `token` is then undefined). Waits for the
 * `signer ready` log line (30 s on an idle machine by default, stretched by its load: ./load-scaled-deadline.ts;
 * stderr is surfaced on failure and the child is killed); stop() sends SIGTERM and waits for the exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { nodeArgsFor } from '../../bin/build-freshness.mjs';
import { SignerClient } from '../../signer/protocol/signer-client.js';
import { initSoftHsmToken, type SoftHsmToken } from '../../ops/softhsm/init-token.js';
import {
  AWS_VARIABLES_KEPT_FROM_TEST_SIGNERS,
  kmsTestSignerEnv,
  testKeyBackend,
  type TestKeyBackend,
} from './kms-test-backend.js';
import { loadScaledDeadline, whenPassed } from './load-scaled-deadline.js';
import { createSignerDatabase, type SignerDatabase } from './test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Rolling per-wallet ceilings far above anything a test or the bench signs (thousands of signatures a
 * second on one wallet): most suites test something else than the signer's own limits. The per-signature
 * maximum keeps the signer's default (100 USDC) unless a test sets it.
 */
export const GENEROUS_SIGNER_LIMITS: Readonly<Record<string, string>> = Object.freeze({
  TREASURY_SIGNER_WALLET_MAX_PER_HOUR: '100000000000000000',
  TREASURY_SIGNER_WALLET_MAX_PER_DAY: '100000000000000000',
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_MINUTE: '1000000000',
  TREASURY_SIGNER_WALLET_SIGNATURES_PER_HOUR: '1000000000',
});

export interface StartTestSignerOptions {
  /** Extra or overriding environment for the signer (e.g. TREASURY_SIGNER_MAX_PER_SIGNATURE, allowed tokens). */
  env?: Record<string, string>;
  /** `generous` (default): GENEROUS_SIGNER_LIMITS under `env`; `signer_defaults`: only what `env` sets. */
  limits?: 'generous' | 'signer_defaults';
  /** Reuse this directory (token, PINs, socket) instead of a fresh temp dir; it is kept on stop(). */
  dir?: string;
  /**
   * How long to wait for `signer ready` on an idle machine (default 30,000 ms); stretched by the machine's load
   * (./load-scaled-deadline.ts): a start that is 2 to 4 s of CPU took 30 s and more beside the other suites.
   */
  readyTimeoutMs?: number;
  /** What node runs instead of signer/main.ts (compiled from dist/ when current, else through tsx: nodeArgsFor). */
  nodeArgs?: string[];
  /**
   * The signer's own policy store (owner-signed policies): `true` makes a database and role for it (dropped on
   * stop()); a `SignerDatabase` reuses one (kept on stop(): a restart test's); absent or false: none.
   */
  policyStore?: boolean | SignerDatabase;
  /** The key backend, whatever TREASURY_TEST_KEY_BACKEND says (default: that). */
  keyBackend?: TestKeyBackend;
}

export interface TestSigner {
  socketPath: string;
  client: SignerClient;
  /** The signer-specific environment it was started with (SOFTHSM2_CONF, TREASURY_*, AWS_* on aws-kms). */
  env: Record<string, string>;
  dir: string;
  /** pkcs11 (SoftHSM) or aws-kms (the KMS emulator), from TREASURY_TEST_KEY_BACKEND. */
  keyBackend: TestKeyBackend;
  /** The SoftHSM token; undefined on aws-kms. */
  token: SoftHsmToken | undefined;
  child: ChildProcess;
  /** Everything the signer wrote to stderr so far. */
  logs(): string;
  /** The signer's policy store, when it was started with one. */
  policyStore: SignerDatabase | undefined;
  /** SIGTERM, wait for exit; resolves with the exit code. Removes the temp dir unless `dir` was given. */
  stop(): Promise<number | null>;
}

/** A TCP port that was free a moment ago on 127.0.0.1 (for TREASURY_SIGNER_METRICS_PORT). */
export { freeLoopbackPort as findFreePort } from '../../ops/net/free-loopback-port.js';

export async function startTestSigner(options: StartTestSignerOptions = {}): Promise<TestSigner> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-'));
  const keyBackend = options.keyBackend ?? testKeyBackend();
  const token = keyBackend === 'pkcs11' ? await initSoftHsmToken({ dir: path.join(dir, 'softhsm') }) : undefined;
  const socketPath = path.join(dir, 'signer.sock');
  const ownStore = options.policyStore === true;
  const policyStore = options.policyStore === true ? await createSignerDatabase() : options.policyStore || undefined;
  const env: Record<string, string> = {
    TREASURY_SIGNER_SOCKET: socketPath,
    ...(policyStore ? { TREASURY_SIGNER_DATABASE_URL: policyStore.connectionString } : {}),
    ...(token
      ? {
          TREASURY_PKCS11_MODULE: token.modulePath,
          TREASURY_PKCS11_TOKEN_LABEL: token.tokenLabel,
          TREASURY_PKCS11_KEK_LABEL: token.kekLabel,
          TREASURY_PKCS11_PIN_FILE: token.pinFile,
          SOFTHSM2_CONF: token.softhsm2Conf,
        }
      : await kmsTestSignerEnv(dir)),
    ...(options.limits === 'signer_defaults' ? {} : GENEROUS_SIGNER_LIMITS),
    ...options.env,
  };
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  if (keyBackend === 'aws-kms') for (const name of AWS_VARIABLES_KEPT_FROM_TEST_SIGNERS) delete childEnv[name];
  delete childEnv.TREASURY_SIGNER_BACKEND;
  const nodeArgs = options.nodeArgs ?? nodeArgsFor('signer/main.ts');
  const child = spawn(process.execPath, nodeArgs, {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await new Promise<void>((resolve, reject) => {
      const deadline = loadScaledDeadline(options.readyTimeoutMs ?? 30_000);
      const timer = whenPassed(deadline, () =>
        reject(new Error(`signer not ready after ${deadline.describe()}:\n${stderr}`)),
      );
      readline.createInterface({ input: child.stderr! }).on('line', (line) => {
        stderr += line + '\n';
        if (line.includes('"msg":"signer ready"')) {
          timer.stop();
          resolve();
        }
      });
      void exited.then((code) => {
        timer.stop();
        // Let readline deliver the last lines before reporting them.
        setImmediate(() => reject(new Error(`signer exited with ${code} before ready:\n${stderr}`)));
      });
    });
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
    if (ownStore) await policyStore?.drop();
    throw err;
  }
  const client = new SignerClient({ socketPath, timeoutMs: 30_000 });
  return {
    socketPath,
    client,
    env,
    dir,
    keyBackend,
    token,
    child,
    logs: () => stderr,
    policyStore,
    async stop() {
      client.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
      if (ownStore) await policyStore?.drop();
      return code;
    },
  };
}

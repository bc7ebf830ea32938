/**
 * Starts a real treasury-signer child process on a throwaway SoftHSM token (its own SOFTHSM2_CONF), for
 * integration tests. Waits for the "signer ready" log line; stop() sends SIGTERM and waits for exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { SignerClient } from '../../signer/protocol/signer-client.js';
import { initSoftHsmToken, type SoftHsmToken } from '../../ops/softhsm/init-token.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface TestSigner {
  socketPath: string;
  client: SignerClient;
  env: Record<string, string>;
  dir: string;
  token: SoftHsmToken;
  child: ChildProcess;
  /** Everything the signer wrote to stderr so far. */
  logs(): string;
  /** SIGTERM, wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startTestSigner(options: { env?: Record<string, string>; dir?: string } = {}): Promise<TestSigner> {
  const dir = options.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-signer-'));
  const token = await initSoftHsmToken({ dir: path.join(dir, 'softhsm') });
  const socketPath = path.join(dir, 'signer.sock');
  const env: Record<string, string> = {
    TREASURY_SIGNER_SOCKET: socketPath,
    TREASURY_PKCS11_MODULE: token.modulePath,
    TREASURY_PKCS11_TOKEN_LABEL: token.tokenLabel,
    TREASURY_PKCS11_KEK_LABEL: token.kekLabel,
    TREASURY_PKCS11_PIN_FILE: token.pinFile,
    SOFTHSM2_CONF: token.softhsm2Conf,
    ...options.env,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'signer/main.ts')], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`signer not ready after 30 s:\n${stderr}`)), 30_000);
    readline.createInterface({ input: child.stderr! }).on('line', (line) => {
      stderr += line + '\n';
      if (line.includes('"msg":"signer ready"')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`signer exited with ${code} before ready:\n${stderr}`));
    });
  });
  const client = new SignerClient({ socketPath, timeoutMs: 30_000 });
  return {
    socketPath,
    client,
    env,
    dir,
    token,
    child,
    logs: () => stderr,
    async stop() {
      client.close();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const code = await exited;
      if (!options.dir) fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}

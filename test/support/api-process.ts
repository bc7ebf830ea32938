/**
 * A treasury-api in its own process (src/api/main.ts under tsx) on a free loopback port, against a database and
 * signer the caller owns: for tests whose subject could block the API's event loop, which would block the
 * test process too if the app ran in it. `stop()` SIGKILLs (a blocked process ignores nothing else).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestSigner } from './signer-harness.js';
import { freePort, type TestDatabase } from './test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startApiProcess(db: TestDatabase, signer: TestSigner, extraEnv: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/api/main.ts')], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: db.connectionString, TREASURY_SIGNER_SOCKET: signer.socketPath, TREASURY_PORT: String(port), TREASURY_LOG_LEVEL: 'warn', ...extraEnv },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  for (let i = 0; i < 300; i++) {
    if (await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false)) return { url, child, stop };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  await stop();
  throw new Error('treasury-api did not become ready');
}

/**
 * A treasury-api in its own process (src/api/main.ts: dist/ when current, else under tsx) on a free loopback port, against a database and
 * signer the caller owns: for tests whose subject could block the API's event loop, which would block the
 * test process too if the app ran in it, or whose subject is the process itself (its shutdown). `stop()`
 * SIGKILLs (a blocked process ignores nothing else). With `logs: true` the process logs at info level and
 * `logs()` returns its standard output and error so far.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeArgsFor } from '../../bin/build-freshness.mjs';
import { loadScaledDeadline } from './load-scaled-deadline.js';
import type { TestSigner } from './signer-harness.js';
import { freePort, type TestDatabase } from './test-database.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ApiProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** What the process wrote so far (only with `logs: true`). */
  logs(): string;
}

export interface ApiProcessOptions {
  /** Capture standard output and error, at TREASURY_LOG_LEVEL=info unless `extraEnv` says otherwise. */
  logs?: boolean;
  /** Where the API finds the signer, when not `signer.socketPath` (e.g. a proxy in front of it). */
  signerSocket?: string;
  /** What node runs instead of `--import tsx src/api/main.ts` (e.g. the compiled dist/src/api/main.js). */
  nodeArgs?: string[];
  /** The process's working directory (the repository root unless given; an image's WORKDIR). */
  cwd?: string;
}

export async function startApiProcess(
  db: TestDatabase,
  signer: TestSigner,
  extraEnv: Record<string, string> = {},
  options: ApiProcessOptions = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const nodeArgs = options.nodeArgs ?? nodeArgsFor('src/api/main.ts');
  const child = spawn(process.execPath, nodeArgs, {
    cwd: options.cwd ?? ROOT,
    env: {
      ...process.env,
      DATABASE_URL: db.connectionString,
      TREASURY_SIGNER_SOCKET: options.signerSocket ?? signer.socketPath,
      TREASURY_PORT: String(port),
      TREASURY_LOG_LEVEL: options.logs ? 'info' : 'warn',
      ...extraEnv,
    },
    stdio: options.logs ? ['ignore', 'pipe', 'pipe'] : 'ignore',
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const logs = () => output;
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  // 30 s on an idle machine, stretched by its load (./load-scaled-deadline.ts); polled every 100 ms.
  const deadline = loadScaledDeadline(30_000);
  while (!deadline.passed()) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return { url, child, stop, logs };
    if (child.exitCode !== null || child.signalCode !== null) break;
    await sleep(100);
  }
  const why =
    child.exitCode === null && child.signalCode === null
      ? `did not become ready after ${deadline.describe()}`
      : `exited (${child.exitCode ?? child.signalCode}) before it was ready`;
  await stop();
  throw new Error(`treasury-api ${why}`);
}

/**
 * Runs anvil (Foundry's local EVM node, from the exact-pinned `@foundry-rs/anvil-linux-amd64` npm package, or ANVIL_BIN / PATH elsewhere) as a child
 * process on 127.0.0.1 for the sandbox and the integration tests.
 *
 * - Chain id 84532 by default: the sandbox impersonates Base Sepolia so clients with built-in Base
 *   Sepolia USDC defaults work unchanged (see deploy-test-usdc.ts).
 * - Anvil's well-known dev mnemonic: its accounts and keys are public test keys, never real money.
 * - Listens on loopback only; a free port is chosen when none is given (retried if taken meanwhile).
 * - Ready once `eth_chainId` answers with the expected id; stop() sends SIGTERM and waits for the exit
 *   (SIGKILL after a grace period).
 * - Orphan protection: an exit hook kills anvil when this process exits normally, and a tiny `sh`
 *   watchdog sends it SIGTERM when this process disappears without running hooks (SIGKILL, crash).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { freeLoopbackPort } from '../../net/free-loopback-port.js';

/** Anvil's default development mnemonic (its accounts are pre-funded with 10,000 ETH each). */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
export const SANDBOX_CHAIN_ID = 84532;

export interface StartAnvilOptions {
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** Chain id (default 84532, Base Sepolia). */
  chainId?: number;
  /** Append anvil's output to this file; without it anvil runs with --silent. */
  logFile?: string;
  /** How long to wait for `eth_chainId` (default 20,000 ms). */
  readyTimeoutMs?: number;
}

export interface AnvilHandle {
  rpcUrl: string;
  chainId: number;
  port: number;
  pid: number;
  /** SIGTERM, wait for the exit (SIGKILL after 5 s). Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Path of the anvil binary: `ANVIL_BIN` when set, else the exact-pinned platform package
 * (`@foundry-rs/anvil-linux-amd64`, an optional dependency), else an `anvil` found on PATH.
 */
export function resolveAnvilBinary(): string {
  const fromEnv = process.env.ANVIL_BIN;
  if (fromEnv) {
    if (!fs.existsSync(fromEnv)) throw new Error(`ANVIL_BIN points at ${fromEnv}, which does not exist`);
    return fromEnv;
  }
  const require = createRequire(import.meta.url);
  const platformPackage = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  try {
    const binary = require.resolve(`${platformPackage}/bin/anvil`);
    if (fs.existsSync(binary)) return binary;
  } catch {
    // not installed for this platform; fall through to PATH
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, 'anvil');
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(
    `anvil binary not found: ${platformPackage} is not installed (npm ships it for linux-x64 only) and no anvil is on PATH. ` +
      'Install Foundry (https://getfoundry.sh) or set ANVIL_BIN.',
  );
}

/** True when nothing listens on 127.0.0.1:`port` (checked by binding it for a moment). */
function isLoopbackPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function rpcChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1000),
    });
    const body = (await res.json()) as { result?: string };
    return typeof body.result === 'string' ? Number(BigInt(body.result)) : undefined;
  } catch {
    return undefined;
  }
}

/** Kills `childPid` when `parentPid` goes away; exits on its own once the child is gone. */
function startOrphanWatchdog(parentPid: number, childPid: number): ChildProcess | undefined {
  try {
    const script =
      'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; kill -TERM "$2" 2>/dev/null; exit 0';
    const watchdog = spawn('sh', ['-c', script, 'anvil-watchdog', String(parentPid), String(childPid)], {
      stdio: 'ignore',
    });
    watchdog.on('error', () => undefined);
    watchdog.unref();
    return watchdog;
  } catch {
    return undefined;
  }
}

/** anvil's command line: loopback only, the sandbox mnemonic and chain id, silent unless it logs to a file. */
function anvilArgs(port: number, chainId: number, silent: boolean): string[] {
  return [
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--chain-id',
    String(chainId),
    '--mnemonic',
    ANVIL_MNEMONIC,
    '--accounts',
    '10',
    ...(silent ? ['--silent'] : []),
  ];
}

/** anvil never outlives this process: killed on its exit, and by a watchdog should it be killed outright. */
function tieToThisProcess(
  child: ChildProcess,
  exitPromise: Promise<void>,
  exited: () => boolean,
  logStream: fs.WriteStream | undefined,
): void {
  const killOnExit = (): void => {
    if (!exited()) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const watchdog = child.pid !== undefined ? startOrphanWatchdog(process.pid, child.pid) : undefined;
  void exitPromise.then(() => {
    process.removeListener('exit', killOnExit);
    if (watchdog && watchdog.exitCode === null) watchdog.kill('SIGTERM');
    logStream?.end();
  });
}

async function startOnce(
  binary: string,
  port: number,
  chainId: number,
  options: StartAnvilOptions,
): Promise<AnvilHandle | 'port_in_use'> {
  const args = anvilArgs(port, chainId, !options.logFile);
  if (options.logFile) fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const logStream = options.logFile ? fs.createWriteStream(options.logFile, { flags: 'a', mode: 0o600 }) : undefined;

  const child = spawn(binary, args, { stdio: ['ignore', logStream ? 'pipe' : 'ignore', 'pipe'] });
  let stderrTail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString('utf8')).slice(-4000);
    logStream?.write(chunk);
  });
  if (logStream) child.stdout?.pipe(logStream, { end: false });

  let exited = false;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', (err) => {
      stderrTail += `\n${err.message}`;
      exited = true;
      resolve();
    });
  });
  tieToThisProcess(child, exitPromise, () => exited, logStream);

  const rpcUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (exited) {
      if (/address already in use|os error 98/i.test(stderrTail)) return 'port_in_use';
      throw new Error(`anvil exited before it was ready (port ${port}):\n${stderrTail.trim()}`);
    }
    const answered = await rpcChainId(rpcUrl);
    if (answered === chainId) break;
    if (answered !== undefined) {
      child.kill('SIGKILL');
      await exitPromise;
      throw new Error(
        `the node on ${rpcUrl} reports chain id ${answered}, expected ${chainId} (another node on that port?)`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      await exitPromise;
      throw new Error(
        `anvil did not answer eth_chainId on ${rpcUrl} within ${options.readyTimeoutMs ?? 20_000} ms:\n${stderrTail.trim()}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  let stopping: Promise<void> | undefined;
  return {
    rpcUrl,
    chainId,
    port,
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        if (exited) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exitPromise;
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}

/** Starts anvil on 127.0.0.1 and resolves once it answers `eth_chainId` with the requested chain id. */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilHandle> {
  const binary = resolveAnvilBinary();
  const chainId = options.chainId ?? SANDBOX_CHAIN_ID;
  // A port picked by us can be taken between the probe and anvil's bind: retry a few times.
  if (options.port !== undefined && !(await isLoopbackPortFree(options.port)))
    throw new Error(`port ${options.port} on 127.0.0.1 is already in use`);
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const port = options.port ?? (await freeLoopbackPort());
    const result = await startOnce(binary, port, chainId, options);
    if (result !== 'port_in_use') return result;
  }
  throw new Error(
    options.port === undefined
      ? 'anvil could not bind a free port after 3 attempts'
      : `port ${options.port} on 127.0.0.1 is already in use`,
  );
}

/**
 * Test helpers for the real `xx` binary (bin/xx.mjs) as a subprocess: a run without a TTY (stdin closed, or
 * piped input), parsers for `--json` stdout and the one-object JSON stderr, a home directory with every
 * XX_* path override, a run under a pseudo-terminal through script(1), and a TCP forwarder that gives the
 * in-process test Treasury an address known before it starts (its public URL, which sign-in messages must
 * name).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startTestTreasury, type TestTreasury } from '../../support/api-harness.js';
import { fileTempDir } from '../../support/temp-dirs.js';

export const ROOT = path.resolve(import.meta.dirname, '../../..');
export const XX_BIN = path.join(ROOT, 'bin/xx.mjs');

export interface XxRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** How long one `xx` run may take before runXx ends it (well under every suite's mocha time-out). */
export const XX_RUN_TIMEOUT_MS = 150_000;

/**
 * Runs `xx args…` with exactly `env` (plus PATH); stdin is closed unless `input` is given. A run still going
 * after `timeoutMs` is ended, and resolves with code null and, after its stderr, where it was waiting: the
 * JavaScript stack and the open handles of Node's diagnostic report (asked for with SIGUSR2, written to a file of
 * its own: a pipe takes only its first kilobyte), not the report's environment.
 */
export function runXx(
  args: string[],
  env: Record<string, string>,
  input?: string,
  timeoutMs = XX_RUN_TIMEOUT_MS,
): Promise<XxRun> {
  const reportDir = fileTempDir('xx-report-');
  const reportFlags = ['--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${reportDir}`];
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...reportFlags, '--report-filename=report.json', '--report-compact', XX_BIN, ...args],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    if (input !== undefined) child.stdin!.end(input);
    // The report first, then the end (a report takes well under the 3 s between them).
    const report = setTimeout(() => {
      timedOut = true;
      child.kill('SIGUSR2');
    }, timeoutMs);
    const kill = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 3_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(report);
      clearTimeout(kill);
      if (!timedOut) return resolve({ code, stdout, stderr });
      const where = hungRunReport(path.join(reportDir, 'report.json'));
      resolve({ code: null, stdout, stderr: `${stderr}\n[xx ${args[0]} ended after ${timeoutMs} ms]\n${where}` });
    });
  });
}

/** A hung run's diagnostic report cut down to the stack and the open handles. */
function hungRunReport(file: string): string {
  try {
    const r = JSON.parse(fs.readFileSync(file, 'utf8')) as { javascriptStack?: unknown; libuv?: unknown };
    return JSON.stringify({ javascriptStack: r.javascriptStack, libuv: r.libuv }, null, 1);
  } catch {
    return '[no diagnostic report]';
  }
}

export function assertOk(run: XxRun, what: string): XxRun {
  assert.equal(run.code, 0, `${what} exited ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  return run;
}

/** The command succeeded and its stdout is one JSON document. */
export function stdoutJson(run: XxRun, what: string): any {
  assertOk(run, what);
  try {
    return JSON.parse(run.stdout);
  } catch {
    assert.fail(`${what}: stdout is not JSON\nstdout: ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

/** Under --json the whole of stderr is exactly one JSON object. */
export function stderrJson(run: XxRun, what: string): any {
  try {
    return JSON.parse(run.stderr);
  } catch {
    assert.fail(`${what}: stderr is not one JSON object (exit ${run.code})\nstderr: ${run.stderr}`);
  }
}

/** A fresh temporary home with every XX_* path override pointing inside it. */
export function xxHome(name: string, extra: Record<string, string> = {}): Record<string, string> & { HOME: string } {
  const home = fileTempDir(`xx-${name}-`);
  return {
    HOME: home,
    XX_SESSION_PATH: path.join(home, 'state', 'session.json'),
    XX_CREDENTIALS_PATH: path.join(home, 'state', 'credentials.json'),
    XX_SERVICES_DIR: path.join(home, 'services'),
    XX_ACTIVE_SERVICE_PATH: path.join(home, 'state', 'active-service'),
    XX_AGENTS_DIR: path.join(home, 'agents'),
    XX_ACTIVE_AGENT_PATH: path.join(home, 'state', 'active-agent'),
    XX_SEEDS_DIR: path.join(home, 'seeds'),
    XX_CONFIG_PATH: path.join(home, 'state', 'config.json'),
    // Never read a developer's ./.treasury/sandbox.json.
    TREASURY_DATA_DIR: path.join(home, 'treasury-data'),
    NO_COLOR: '1',
    ...extra,
  };
}

export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

export function dirsUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? [path.join(dir, e.name), ...dirsUnder(path.join(dir, e.name))] : []));
}

export function hasScript(): boolean {
  return spawnSync('script', ['--version']).status === 0;
}

/**
 * `xx args…` on a pseudo-terminal (util-linux script -q -f -e -c); `answer(pattern, text)` waits for the
 * output to match, then types `text` and Enter. Resolves the exit code and everything the terminal showed.
 */
export function runXxOnTty(args: string[], env: Record<string, string>) {
  const quoted = [process.execPath, XX_BIN, ...args].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', quoted, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (screen += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    get screen() {
      return screen;
    },
    async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(screen) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.match(screen, pattern);
    },
    async answer(pattern: RegExp, text: string): Promise<void> {
      await this.waitFor(pattern);
      child.stdin.write(`${text}\r`);
    },
    exit,
    kill: () => child.kill('SIGKILL'),
  };
}

/** xxHome for a CLI that calls `apiUrl` and keeps its keystore under `passphrase` (scrypt made cheap for tests). */
export function xxHomeFor(name: string, apiUrl: string, passphrase: string): Record<string, string> & { HOME: string } {
  return xxHome(name, { XX_API_URL: apiUrl, XX_KEYSTORE_PASSPHRASE: passphrase, XX_KEYSTORE_SCRYPT_LOG_N: '10' });
}

/** A loopback TCP forwarder (startForwarder). */
export interface Forwarder {
  url: string;
  target(port: number): void;
  close(): Promise<void>;
}

/** A loopback TCP forwarder: listens now, forwards to `target(port)` once it is set. */
export async function startForwarder(): Promise<Forwarder> {
  let targetPort: number | undefined;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    sockets.add(inbound);
    inbound.on('close', () => sockets.delete(inbound));
    if (targetPort === undefined) return void inbound.destroy();
    const outbound = net.connect(targetPort, '127.0.0.1');
    sockets.add(outbound);
    outbound.on('close', () => sockets.delete(outbound));
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    target: (p) => void (targetPort = p),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A test treasury behind a forwarder started first, so that its public URL (TREASURY_PUBLIC_URL, which the
 * CLI's sign-in names) is the forwarder's, with `extraEnv` besides; the caller closes both.
 */
export async function startForwardedTreasury(
  extraEnv: Record<string, string> = {},
): Promise<{ forwarder: Forwarder; t: TestTreasury }> {
  const forwarder = await startForwarder();
  const t = await startTestTreasury({ extraEnv: { TREASURY_PUBLIC_URL: forwarder.url, ...extraEnv } });
  forwarder.target(Number(new URL(t.baseUrl).port));
  return { forwarder, t };
}

/**
 * The steady phase's floor for `npm run bench`: a payment's hand-offs with none of its work, driven at the
 * same rate as phase (c), so that its tail can be read against what this machine gives any service of that
 * shape in the same run.
 *
 * Three processes stand in for the API, the signer and the writer's PostgreSQL backend:
 * - a front (node:http, as under Koa) that, for each request, sends 200 bytes to
 * - an echo process over a unix socket (the signer's hop) and waits for them back, then
 * - commits one row per request to PostgreSQL through a single connection, the requests that arrive while a
 *   statement is in flight going together in the next one (as the API's group-commit writer does: one
 *   synchronous commit per statement, one round trip), into a table autovacuum leaves alone (its vacuum
 *   would otherwise run during the phase measured next),
 * and answers 200 with a 700-byte JSON body. No authentication, validation, policy, hashing or signing —
 * unless `workMicros` asks the front and the echo process to stay busy for so many µs per request (a busy
 * loop standing in for the API's and the signer's own work), which shows how the tail grows with the CPU a
 * request costs on this machine.
 *
 * Why: the steady target (p99 ≤ 20 ms at 400 pays/s) depends on the machine as much as on the service — on a
 * VM each hand-off wakes a process from idle, and a host's own work (a memory monitor, interrupts) stalls all
 * processes at once. A floor measured beside (c) tells a run on a machine that cannot meet the target from a
 * regression in the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SteadyFloor {
  port: number;
  pid: number;
  /** The echo process's pid (its CPU belongs to the floor). */
  echoPid: number;
  stop(): void;
}

/** A busy loop of `us` µs (both processes' stand-in for work). */
const BUSY = `const busy = (us) => { const until = process.hrtime.bigint() + BigInt(Math.round(us * 1000)); while (process.hrtime.bigint() < until); };`;

/** argv: socket path, µs of work per 200-byte message. */
const ECHO = `const net = require('node:net');
${BUSY}
const work = Number(process.argv[2]);
net.createServer((s) => { s.setNoDelay(true); s.on('data', (d) => { if (work > 0) busy((work * d.length) / 200); s.write(d); }); }).listen(process.argv[1], () => process.stdout.write('up\\n'));`;

/** CommonJS run by `node -e` in the project's directory (for `pg`); argv: socket path, port, connection string, the front's and the echo's µs of work. */
const FRONT = `const http = require('node:http');
const net = require('node:net');
const { spawn } = require('node:child_process');
const pg = require('pg');
${BUSY}
const [socketPath, port, connectionString, frontWork, echoWork] = process.argv.slice(1);
const echo = spawn(process.execPath, ['-e', ${JSON.stringify(ECHO)}, socketPath, echoWork], { stdio: ['ignore', 'pipe', 'inherit'] });
process.on('SIGTERM', () => { echo.kill(); process.exit(0); });
echo.once('exit', () => process.exit(1));
echo.stdout.once('data', async () => {
  const hop = net.connect(socketPath);
  hop.setNoDelay(true);
  const hopWaiters = [];
  let hopBytes = 0;
  hop.on('data', (d) => { hopBytes += d.length; while (hopBytes >= 200 && hopWaiters.length > 0) { hopBytes -= 200; hopWaiters.shift()(); } });
  const message = Buffer.alloc(200, 0x61);
  const handOff = () => new Promise((resolve) => { hopWaiters.push(resolve); hop.write(message); });
  const db = new pg.Client({ connectionString });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, k int NOT NULL, v bigint NOT NULL, at timestamptz NOT NULL DEFAULT now()) WITH (autovacuum_enabled = false)');
  let queued = [];
  let writing = false;
  const writeNext = () => {
    if (writing || queued.length === 0) return;
    const batch = queued;
    queued = [];
    writing = true;
    db.query({ name: 'floor', text: 'INSERT INTO bench_floor (k, v) SELECT * FROM unnest($1::int[], $2::bigint[])', values: [batch.map((w) => w.k), batch.map((w) => w.v)] }).then(
      () => { for (const w of batch) w.done(true); },
      () => { for (const w of batch) w.done(false); },
    ).finally(() => { writing = false; writeNext(); });
  };
  const record = (k, v) => new Promise((done) => { queued.push({ k, v, done }); writeNext(); });
  const answer = Buffer.from(JSON.stringify({ authorization: { from: '0x'.padEnd(42, '1'), to: '0x'.padEnd(42, '2'), value: '1000', validAfter: '0', validBefore: '0', nonce: '0x'.padEnd(66, '3') }, signature: '0x'.padEnd(132, '4'), padding: '' }).padEnd(700, ' '));
  let n = 0;
  http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      if (Number(frontWork) > 0) busy(Number(frontWork));
      await handOff();
      const ok = await record(n % 1000, n++);
      res.writeHead(ok ? 200 : 500, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  }).listen(Number(port), '127.0.0.1', () => process.stdout.write('up ' + echo.pid + '\\n'));
});`;

export interface SteadyFloorOptions {
  connectionString: string;
  port: number;
  /** A directory that resolves the `pg` package (the project's root). */
  cwd: string;
  /** µs of busy work per request in the front and in the echo process (default none). */
  workMicros?: { front: number; echo: number };
}

/** Starts the floor's three processes; it commits into a table `bench_floor` it creates. */
export async function startSteadyFloor(options: SteadyFloorOptions): Promise<SteadyFloor> {
  const { connectionString, port, cwd } = options;
  const work = options.workMicros ?? { front: 0, echo: 0 };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'treasury-bench-floor-'));
  const args = [
    '-e',
    FRONT,
    path.join(dir, 'hop.sock'),
    String(port),
    connectionString,
    String(work.front),
    String(work.echo),
  ];
  const child: ChildProcess = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = () => {
    child.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The front prints "up <echo pid>" once it listens.
    const up = await new Promise<string>((resolve, reject) => {
      child.stdout!.once('data', (d: Buffer) => resolve(d.toString()));
      child.once('exit', (code) => reject(new Error(`the steady floor's front exited (${code})`)));
    });
    const echoPid = Number(up.trim().split(' ')[1]);
    return { port, pid: child.pid!, echoPid, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/**
 * A TCP port that was free a moment ago on 127.0.0.1, for the sandbox's children and the test harnesses, which pass
 * the port to a process they start.
 *
 * Defends against: the port being taken before the caller's process listens on it, for the common cause. The
 * kernel's own choice (`listen(0)`) lies in its ephemeral range, the range every outgoing connection's local port is
 * also drawn from: on a busy machine (parallel test workers, each with its pools of loopback connections) one of
 * them can take the port within the seconds a sandbox needs to start its API (measured: a sandbox test failed with
 * EADDRINUSE). Where the ephemeral range is known (Linux), the port is drawn at random below it, checked by
 * listening on it, and only then released; elsewhere, or if no such port is found, the kernel picks.
 * Does not reserve the port: two callers may still draw the same one, or another program may listen on it first.
 */
import fs from 'node:fs';
import net from 'node:net';

/** Ports below this are left alone (well-known and registered services). */
const LOWEST = 10_000;
const TRIES = 20;

/** The first port of the kernel's ephemeral range, or undefined where it cannot be read. */
function ephemeralStart(): number | undefined {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST ? low : undefined;
  } catch {
    return undefined;
  }
}

/** Listens on `port` (0: the kernel's choice) and closes at once; the port, or undefined if it was taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

export async function freeLoopbackPort(): Promise<number> {
  const high = ephemeralStart();
  if (high !== undefined) {
    for (let i = 0; i < TRIES; i++) {
      const port = await probe(LOWEST + Math.floor(Math.random() * (high - LOWEST)));
      if (port !== undefined) return port;
    }
  }
  const port = await probe(0);
  if (port === undefined) throw new Error('no free loopback port');
  return port;
}

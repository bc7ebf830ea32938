/**
 * The CLI's kept-alive connections to each server it talks to (./api-client.ts), reused only while fresh.
 *
 * Defends: a request written on a connection the server has just closed, which fails with `socket hang up` although
 * the server is up. Node's agent closes an idle kept-alive connection on a timer, a second before the time-out the
 * server announces (node:http servers: 5 s), but no timer runs while the process computes: between a sign-in's
 * requests the CLI derives keys from the seed (BIP39's PBKDF2, BIP32, SLIP-0010) and signs, seconds of CPU on a slow
 * or loaded machine, and the next request went out at once on the connection the server had closed meanwhile. So a
 * server's pool is reused only if it was last used (a request sent, or a reply ended) at most REUSE_WITHIN_MS ago by
 * the monotonic clock, which counts the time spent computing; otherwise it is set aside and the request opens a new
 * connection in a new pool. While the process stays responsive, Node's own timers keep the pool's idle connections
 * honest.
 * Does not: repeat a request (a POST may not be safe to send twice), or close a connection in use (a pool set aside
 * still carries the replies it waits for; its idle connections close on their own timers and never hold the process
 * open, as Node unreferences them).
 */
import type http from 'node:http';

/** A pool unused for longer than this is not reused (Node's agent keeps a margin of one second too). */
export const REUSE_WITHIN_MS = 1_000;

/** How long an idle connection is kept when the server announces no time-out (Node's global agent's). */
const IDLE_TIMEOUT_MS = 5_000;

interface Pool {
  agent: http.Agent;
  lastUsedAt: number;
}

/** One pool per origin (scheme, host and port): the few servers a command or an `xx mcp` session talks to. */
const pools = new Map<string, Pool>();

/** A connection for one exchange with `url`'s server: the agent to send it with, and `ended()` once its reply ended. */
export interface Connection {
  agent: http.Agent;
  ended(): void;
}

export function connectionFor(url: URL): Connection {
  const now = performance.now();
  let pool = pools.get(url.origin);
  if (!pool || now - pool.lastUsedAt > REUSE_WITHIN_MS) {
    // Taken as ./api-client.ts takes the transport, so that loading this module loads neither (nor undici).
    const transport = process.getBuiltinModule(url.protocol === 'https:' ? 'node:https' : 'node:http');
    pool = { agent: new transport.Agent({ keepAlive: true, timeout: IDLE_TIMEOUT_MS }), lastUsedAt: now };
    pools.set(url.origin, pool);
  }
  pool.lastUsedAt = now;
  const used = pool;
  return {
    agent: used.agent,
    ended: () => {
      used.lastUsedAt = performance.now();
    },
  };
}

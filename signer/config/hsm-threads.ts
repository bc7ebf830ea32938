/**
 * How many of a PKCS#11 signer's sessions can sign at once. pkcs11js runs each asynchronous C_Sign on libuv's
 * thread pool, whose size Node reads from UV_THREADPOOL_SIZE once, when the process starts (an ES module entry
 * point has used the pool to load itself before its first line runs, so the signer cannot raise it from inside).
 * Sessions beyond the pool's threads wait for a thread: on an HSM that signs over the network, where each C_Sign
 * is a round trip, the signer's rate stops at threads ÷ round trip whatever TREASURY_PKCS11_SESSIONS says
 * (docs/deploy-hsm.md, "Sessions and threads").
 *
 * Defends: a signer configured for more concurrency than it has, silently — the start logs the shortfall.
 * Does not defend: the pool's other users (file system calls, DNS lookups) taking threads for a while; nor the
 * AWS KMS backend, whose calls are HTTP requests on the event loop and use no pool thread.
 */
/** libuv's pool when UV_THREADPOOL_SIZE is unset. */
export const LIBUV_DEFAULT_THREADS = 4;
/** The most threads libuv starts, whatever UV_THREADPOOL_SIZE asks for. */
export const LIBUV_MAX_THREADS = 1024;

export interface HsmThreadShortfall {
  sessions: number;
  threads: number;
}

/**
 * The shortfall when a PKCS#11 backend keeps more sessions than the pool has threads; undefined when every session
 * can sign at once, or for a backend without sessions (`sessions` undefined: AWS KMS).
 */
export function hsmThreadShortfall(sessions: number | undefined, threads: number): HsmThreadShortfall | undefined {
  return sessions !== undefined && sessions > threads ? { sessions, threads } : undefined;
}

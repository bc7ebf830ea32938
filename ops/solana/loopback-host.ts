/**
 * The one host the local Solana servers bind: 127.0.0.1. A caller asking for any other host (0.0.0.0,
 * ::, a LAN address, even `localhost`, which may resolve to ::1 or elsewhere) is refused before anything
 * listens.
 * Defends against: a development chain, its airdrop and its fee-payer key being exposed off the machine.
 * Does not: stop other local users or processes from reaching the port.
 */
export const LOOPBACK_HOST = '127.0.0.1';

export function assertLoopbackHost(host: string | undefined): void {
  if (host !== undefined && host !== LOOPBACK_HOST)
    throw new Error(`the local Solana chain listens on ${LOOPBACK_HOST} only (asked for ${JSON.stringify(host)})`);
}

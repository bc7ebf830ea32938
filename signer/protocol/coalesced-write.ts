/**
 * `writeCoalesced(socket, bytes)`: frames written to one socket during the same event-loop turn leave in one
 * `writev` — the socket is corked at the first write and uncorked at `setImmediate`, after the turn's I/O
 * callbacks ran. Each write is a system call, and on small virtual machines a system call costs more than
 * encoding a frame; under load several requests (or replies) share one. Idle, a frame waits for no timer:
 * it leaves at the end of the current turn.
 *
 * Defends nothing by itself; it changes when bytes leave, never which bytes or in what order. It returns what
 * `socket.write` returns — false once the socket holds more unwritten bytes than its high-water mark (corked
 * bytes count) — and the caller bounds them (../server/signer-server.ts pauses, then closes, a connection
 * whose peer does not read its replies).
 */
import type { Socket } from 'node:net';

const corked = new WeakSet<Socket>();

/** Writes `bytes` in this turn's batch; false when the socket's unwritten bytes are past its high-water mark. */
export function writeCoalesced(socket: Socket, bytes: Uint8Array): boolean {
  if (!corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  return socket.write(bytes);
}

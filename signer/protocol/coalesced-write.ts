/**
 * `writeCoalesced(socket, bytes)`: frames written to one socket during the same event-loop turn leave in one
 * `writev` — the socket is corked at the first write and uncorked at `setImmediate`, after the turn's I/O
 * callbacks ran. Each write is a system call, and on small virtual machines a system call costs more than
 * encoding a frame; under load several requests (or replies) share one. Idle, a frame waits for no timer:
 * it leaves at the end of the current turn.
 *
 * Defends nothing by itself; it changes when bytes leave, never which bytes or in what order.
 */
import type { Socket } from 'node:net';

const corked = new WeakSet<Socket>();

export function writeCoalesced(socket: Socket, bytes: Uint8Array): void {
  if (!corked.has(socket)) {
    corked.add(socket);
    socket.cork();
    setImmediate(() => {
      corked.delete(socket);
      socket.uncork();
    });
  }
  socket.write(bytes);
}

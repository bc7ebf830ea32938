/**
 * The unix-socket server of treasury-signer: length-prefixed JSON frames (../protocol/frame-codec.ts,
 * MAX_FRAME_BYTES = 256 KiB of payload max), each parsed and zod-validated (signerRequestSchema) before
 * anything runs; work bounded by a concurrency limit and a queue limit; replies bounded per connection by
 * what its peer reads; graceful close.
 *
 * Protects against: a socket other local users can open (created under umask 0177, then chmod 0600 —
 * or 0660 for the socket's group with TREASURY_SIGNER_SOCKET_MODE, when the API runs as another user; a
 * stale socket file is removed first); oversize frames (`frame_too_large`, then that connection is
 * closed — the payload is never buffered); bad JSON, invalid UTF-8 and zero-length frames
 * (`malformed_frame`, id null, connection kept); wrong shapes (`invalid_request`), unknown methods
 * (`unknown_method`, own keys only — "constructor" is not a method), other versions
 * (`unsupported_version`); floods (`busy` past the queue limit); idle connections (timeout); a peer that
 * sends and never reads its replies (every refusal is answered, so tiny invalid frames would otherwise buffer
 * replies without bound): past PAUSE_UNWRITTEN_BYTES of unwritten replies the connection is no longer read
 * until they drain, and past CLOSE_UNWRITTEN_BYTES it is closed (`treasury_signer_connections_closed_total`,
 * reason `unread_replies`). One hostile connection never stops the others, and no thrown error escapes a
 * frame handler. A reply is written in the microtasks that follow its `handle` (no macrotask between; the bytes
 * leave corked at the end of the turn), and every connection's corked replies are flushed before a
 * `destroy_wallet_key` answer is written: no signature of a key leaves after its destroy's answer (with
 * ../key-destruction/key-destructions.ts).
 * Known limits: anyone who can open the socket may ask for any signature within the static invariants and
 * the per-wallet limits (../limits/); the bound is per connection, and the number of connections is not
 * bounded here (only the socket's owner, or its group, can open one); a connection held paused by a peer
 * that never reads lives until the idle timeout.
 */
import fs from 'node:fs';
import net from 'node:net';
import type { Logger } from 'pino';
import { encodeFrame, FrameDecoder } from '../protocol/frame-codec.js';
import { writeCoalesced } from '../protocol/coalesced-write.js';
import {
  SIGNER_METHODS,
  signerRequestSchema,
  type SignerErrorCode,
  type SignerErrorDetails,
  type SignerRequest,
} from '../protocol/signer-protocol.js';
import type { SignerMetrics } from '../metrics/signer-metrics.js';
import type { SignerService } from '../signer-service.js';
import { SignerFault } from '../signer-error.js';

export interface SignerServerOptions {
  socketPath: string;
  /** 0o600 (default): the signer's user only; 0o660: its group too (the API's user in the Dockerfile's layout). */
  socketMode?: 0o600 | 0o660;
  service: SignerService;
  log: Logger;
  metrics: SignerMetrics;
  /** Requests processed at once across all connections (keep ≈ sessions × 4); the rest wait in a queue. */
  maxInFlight?: number;
  /** Requests accepted and not yet answered (running + waiting); past it, new ones get `busy`. */
  maxQueue?: number;
  /** A connection with no traffic for this long is closed. */
  idleTimeoutMs?: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Unwritten reply bytes past which a connection is no longer read until they drain: four frames of the largest
 * size, thousands of ordinary replies. A peer that reads never comes near it (the kernel's socket buffer takes
 * the first ≈200 KiB; the default queue's replies are ≈300 KiB in all).
 */
const PAUSE_UNWRITTEN_BYTES = 1024 * 1024;
/**
 * Unwritten reply bytes past which the connection is closed. Once paused, only what was already read can still
 * answer: the rest of one read of at most 64 KiB (≈1.4 MiB of replies when it is all empty frames, the most
 * replies a read can ask for) and the connection's accepted requests (at most the queue limit, a few hundred
 * bytes each) — past this, its peer holds a large share of the queue and reads none of it.
 */
const CLOSE_UNWRITTEN_BYTES = 8 * 1024 * 1024;

/** Why the server closed a connection itself (`treasury_signer_connections_closed_total{reason}`). */
type ClosedReason = 'frame_too_large' | 'unread_replies' | 'idle_timeout';

/** The request id to echo in an error reply, when the frame carried a usable one. */
function replyIdOf(raw: unknown): string | null {
  const id = (raw as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 && id.length <= 64 ? id : null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Removes a socket left by a crashed run — only a socket: a misconfigured path to a regular file is refused. */
function removeStaleSocket(socketPath: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (!stat.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace or remove it`);
  fs.rmSync(socketPath);
}

export class SignerServer {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private running = 0;
  private accepted = 0;
  private readonly waiting: Array<() => void> = [];
  private readonly tasks = new Set<Promise<void>>();
  private readonly maxInFlight: number;
  private readonly maxQueue: number;
  private readonly idleTimeoutMs: number;
  private closing = false;
  /** Asked by the backend just before it signs: no other request is accepted and unanswered. */
  private readonly context = { alone: () => this.accepted === 1 };

  constructor(private readonly options: SignerServerOptions) {
    this.maxInFlight = options.maxInFlight ?? 16;
    this.maxQueue = Math.max(options.maxQueue ?? 1024, this.maxInFlight);
    this.idleTimeoutMs = options.idleTimeoutMs ?? 10 * 60 * 1000;
  }

  listen(): Promise<void> {
    const { socketPath } = this.options;
    removeStaleSocket(socketPath);
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.onConnection(socket));
      const mode = this.options.socketMode ?? 0o600;
      // Created with no more than `mode` from the start (no window where it is wider), then chmod'ed to exactly it.
      const previous = process.umask(0o777 & ~mode);
      server.once('error', (err) => {
        process.umask(previous);
        reject(err);
      });
      server.listen(socketPath, () => {
        process.umask(previous);
        try {
          fs.chmodSync(socketPath, mode);
        } catch (err) {
          server.close();
          reject(err);
          return;
        }
        this.server = server;
        resolve();
      });
    });
  }

  private send(socket: net.Socket, payload: unknown): void {
    if (socket.destroyed || !socket.writable) return;
    if (!writeCoalesced(socket, encodeFrame(payload))) this.holdBack(socket);
  }

  /**
   * Hands every connection's corked replies to the kernel now (../protocol/coalesced-write.ts holds a turn's replies
   * corked until setImmediate, and another connection's may be uncorked after this one's). Called before a destroy's
   * answer is written: a signature of that key that passed the service's last check before the destroy began was
   * written to its socket (corked, maybe) before the destroy answered (../key-destruction/key-destructions.ts), so
   * it reaches the kernel first. The pending uncork then finds the socket uncorked, and does nothing.
   */
  private flushReplies(): void {
    for (const socket of this.sockets) while (socket.writableCorked > 0) socket.uncork();
  }

  /**
   * Backpressure on one connection whose replies are piling up (its last write went past the socket's high-water
   * mark): past PAUSE_UNWRITTEN_BYTES it is not read until they drain, past CLOSE_UNWRITTEN_BYTES it is closed.
   */
  private holdBack(socket: net.Socket): void {
    const unwritten = socket.writableLength;
    if (unwritten > CLOSE_UNWRITTEN_BYTES) {
      this.options.log.warn({ unwritten_bytes: unwritten }, 'signer connection closed: its replies are not read');
      this.closeConnection(socket, 'unread_replies');
      return;
    }
    if (unwritten > PAUSE_UNWRITTEN_BYTES && !socket.isPaused()) {
      socket.pause();
      socket.once('drain', () => socket.resume());
    }
  }

  private closeConnection(socket: net.Socket, reason: ClosedReason): void {
    this.options.metrics.connectionsClosed.inc({ reason });
    if (reason === 'frame_too_large') socket.end();
    else socket.destroy();
  }

  private sendError(
    socket: net.Socket,
    id: string | null,
    code: SignerErrorCode,
    message: string,
    method = 'none',
    details?: SignerErrorDetails,
  ): void {
    this.options.metrics.requests.inc({ method, outcome: code });
    this.send(socket, {
      v: 1,
      id,
      ok: false,
      error: details ? { code, message: message.slice(0, 1024), details } : { code, message: message.slice(0, 1024) },
    });
  }

  private onConnection(socket: net.Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.setTimeout(this.idleTimeoutMs, () => this.closeConnection(socket, 'idle_timeout'));
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const event of decoder.push(chunk)) {
        if (socket.destroyed) return; // closed for unread replies: the rest of the chunk is not answered
        if (event.kind === 'too_large') {
          this.sendError(socket, null, 'frame_too_large', `frame of ${event.length} bytes exceeds the limit`);
          this.closeConnection(socket, 'frame_too_large');
          return;
        }
        if (event.kind === 'empty') {
          this.sendError(socket, null, 'malformed_frame', 'empty frame');
          continue;
        }
        try {
          this.onFrame(socket, event.payload);
        } catch (err) {
          // Never let one frame take the process down: answer and keep serving.
          this.options.log.error({ err: err instanceof Error ? err.message : String(err) }, 'frame handling failed');
          this.sendError(socket, null, 'internal_error', 'internal error');
        }
      }
    });
  }

  /** Parses and validates one frame, then schedules it; every refusal is answered on the same connection. */
  private onFrame(socket: net.Socket, payload: Buffer): void {
    let raw: unknown;
    try {
      raw = JSON.parse(utf8.decode(payload));
    } catch {
      this.sendError(socket, null, 'malformed_frame', 'frame is not UTF-8 JSON');
      return;
    }
    const id = replyIdOf(raw);
    const parsed = signerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      if (!isPlainObject(raw)) return this.sendError(socket, id, 'invalid_request', 'a request is a JSON object');
      if (raw.v !== undefined && raw.v !== 1)
        return this.sendError(socket, id, 'unsupported_version', 'protocol version 1 only');
      if (typeof raw.method === 'string' && !Object.hasOwn(SIGNER_METHODS, raw.method))
        return this.sendError(socket, id, 'unknown_method', 'unknown method');
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(frame)'}: ${i.message}`);
      const method = typeof raw.method === 'string' && Object.hasOwn(SIGNER_METHODS, raw.method) ? raw.method : 'none';
      return this.sendError(socket, id, 'invalid_request', issues.join('; '), method);
    }
    const request = parsed.data;
    if (this.closing) return this.sendError(socket, request.id, 'busy', 'signer is shutting down', request.method);
    if (this.accepted >= this.maxQueue)
      return this.sendError(socket, request.id, 'busy', 'signer queue is full; retry later', request.method);
    this.accepted++;
    const task = this.run(socket, request).finally(() => {
      this.accepted--;
      this.tasks.delete(task);
    });
    this.tasks.add(task);
  }

  private async run(socket: net.Socket, request: SignerRequest): Promise<void> {
    if (this.running >= this.maxInFlight) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    const stopTimer = this.options.metrics.duration.startTimer({ method: request.method });
    try {
      const result = await this.options.service.handle(request, this.context);
      this.options.metrics.requests.inc({ method: request.method, outcome: 'ok' });
      // Every reply is written in the microtasks that follow `handle`, with no macrotask between; a destroy's answer
      // leaves after every reply written before it, on any connection.
      if (request.method === 'destroy_wallet_key') this.flushReplies();
      this.send(socket, { v: 1, id: request.id, ok: true, result });
    } catch (err) {
      const fault = err instanceof SignerFault ? err : new SignerFault('internal_error', 'internal error');
      if (!(err instanceof SignerFault)) {
        this.options.log.error(
          { method: request.method, err: err instanceof Error ? err.message : String(err) },
          'signer request failed',
        );
      }
      this.sendError(
        socket,
        request.id,
        fault.code,
        fault.message,
        request.method,
        Object.keys(fault.details).length > 0 ? fault.details : undefined,
      );
    } finally {
      stopTimer();
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Stop accepting connections and requests, finish the accepted ones, close connections, remove the socket file. */
  async close(): Promise<void> {
    this.closing = true;
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
    for (const socket of this.sockets) socket.end();
    // server.close() resolves once every connection has ended; give slow peers a moment, then cut them.
    const timer = setTimeout(() => {
      for (const socket of this.sockets) socket.destroy();
    }, 2000);
    await closed;
    clearTimeout(timer);
    // Only a socket this server bound is removed: never whatever else sits at the path.
    if (server) {
      try {
        removeStaleSocket(this.options.socketPath);
      } catch (err) {
        this.options.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'socket path left in place');
      }
    }
  }
}

/**
 * The unix-socket server of treasury-signer. The socket is created with mode 0600 (umask around listen,
 * then chmod), a stale socket file is removed first, frames are length-limited, every frame is parsed and
 * zod-validated before anything runs, and concurrent work is bounded.
 *
 * Defends: oversize frames (reply `frame_too_large`, connection closed before buffering), bad JSON and
 * zero-length frames (`malformed_frame`, connection kept), wrong shapes (`invalid_request`), unknown
 * methods (`unknown_method`), other versions (`unsupported_version`); one hostile connection never stops
 * the others. Internal errors are reported by code with a generic message.
 * Does not defend: local users with write access to the socket directory; rely on file permissions.
 */
import fs from 'node:fs';
import net from 'node:net';
import type { Logger } from 'pino';
import { encodeFrame, FrameDecoder } from '../protocol/frame-codec.js';
import { SIGNER_METHODS, signerRequestSchema, type SignerErrorCode } from '../protocol/signer-protocol.js';
import type { SignerMetrics } from '../metrics/signer-metrics.js';
import type { SignerService } from '../signer-service.js';
import { SignerFault } from '../signer-error.js';

const IDLE_TIMEOUT_MS = 10 * 60 * 1000;

export interface SignerServerOptions {
  socketPath: string;
  service: SignerService;
  log: Logger;
  metrics: SignerMetrics;
  /** Requests processed at once across all connections; the rest queue. */
  maxInFlight?: number;
}

export class SignerServer {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private inFlight = 0;
  private readonly queue: Array<() => void> = [];
  private readonly pending = new Set<Promise<void>>();
  private readonly maxInFlight: number;

  constructor(private readonly options: SignerServerOptions) {
    this.maxInFlight = options.maxInFlight ?? 16;
  }

  listen(): Promise<void> {
    const { socketPath } = this.options;
    if (fs.existsSync(socketPath)) fs.rmSync(socketPath);
    return new Promise((resolve, reject) => {
      const server = net.createServer((socket) => this.onConnection(socket));
      const previous = process.umask(0o177);
      server.once('error', (err) => {
        process.umask(previous);
        reject(err);
      });
      server.listen(socketPath, () => {
        process.umask(previous);
        fs.chmodSync(socketPath, 0o600);
        this.server = server;
        resolve();
      });
    });
  }

  private reply(socket: net.Socket, payload: unknown): void {
    if (!socket.destroyed) socket.write(encodeFrame(payload));
  }

  private replyError(socket: net.Socket, id: string | null, code: SignerErrorCode, message: string): void {
    this.options.metrics.frameErrors.inc({ code });
    this.reply(socket, { v: 1, id, ok: false, error: { code, message: message.slice(0, 1024) } });
  }

  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const event of decoder.push(chunk)) {
        if (event.kind === 'too_large') {
          this.replyError(socket, null, 'frame_too_large', `frame of ${event.length} bytes exceeds the limit`);
          socket.end();
          return;
        }
        if (event.kind === 'empty') {
          this.replyError(socket, null, 'malformed_frame', 'empty frame');
          continue;
        }
        try {
          this.onFrame(socket, event.payload);
        } catch (err) {
          // Never let one frame take the process down: answer and keep serving.
          this.options.log.error({ err: err instanceof Error ? err.message : String(err) }, 'frame handling failed');
          this.replyError(socket, null, 'internal_error', 'internal error');
        }
      }
    });
  }

  private onFrame(socket: net.Socket, payload: Buffer): void {
    let raw: unknown;
    try {
      const text = new TextDecoder('utf-8', { fatal: true }).decode(payload);
      raw = JSON.parse(text);
    } catch {
      this.replyError(socket, null, 'malformed_frame', 'frame is not UTF-8 JSON');
      return;
    }
    const id = typeof (raw as { id?: unknown })?.id === 'string' && (raw as { id: string }).id.length <= 64 ? (raw as { id: string }).id : null;
    const parsed = signerRequestSchema.safeParse(raw);
    if (!parsed.success) {
      const obj = raw as { v?: unknown; method?: unknown } | null;
      if (obj && typeof obj === 'object' && obj.v !== undefined && obj.v !== 1) return this.replyError(socket, id, 'unsupported_version', 'protocol version 1 only');
      if (obj && typeof obj === 'object' && (typeof obj.method !== 'string' || !(obj.method in SIGNER_METHODS))) {
        return this.replyError(socket, id, 'unknown_method', 'unknown method');
      }
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`);
      return this.replyError(socket, id, 'invalid_request', issues.join('; '));
    }
    const request = parsed.data;
    const task = this.schedule(async () => {
      const stop = this.options.metrics.duration.startTimer({ method: request.method });
      try {
        const result = await this.options.service.handle(request);
        this.options.metrics.requests.inc({ method: request.method, outcome: 'ok' });
        this.reply(socket, { v: 1, id: request.id, ok: true, result });
      } catch (err) {
        const fault = err instanceof SignerFault ? err : new SignerFault('internal_error', 'internal error');
        if (!(err instanceof SignerFault)) this.options.log.error({ method: request.method, err: err instanceof Error ? err.message : String(err) }, 'signer request failed');
        this.options.metrics.requests.inc({ method: request.method, outcome: fault.code });
        this.reply(socket, { v: 1, id: request.id, ok: false, error: { code: fault.code, message: fault.message.slice(0, 1024) } });
      } finally {
        stop();
      }
    });
    this.pending.add(task);
    void task.finally(() => this.pending.delete(task));
  }

  private async schedule(fn: () => Promise<void>): Promise<void> {
    if (this.inFlight >= this.maxInFlight) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.inFlight++;
    try {
      await fn();
    } finally {
      this.inFlight--;
      this.queue.shift()?.();
    }
  }

  /** Stop accepting, finish in-flight requests, close connections, remove the socket file. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.pending]);
    for (const socket of this.sockets) socket.end();
    fs.rmSync(this.options.socketPath, { force: true });
  }
}

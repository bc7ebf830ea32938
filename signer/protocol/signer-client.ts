/**
 * Client for the signer socket, used by the front. Pipelines requests over one persistent unix-socket
 * connection (by default) and matches replies by request id. One connection, not several: the requests of an
 * event-loop turn leave in one `writev` (./coalesced-write.ts) and arrive in one read, and their replies come
 * back the same way, so under load the system calls on both sides are shared by every request in flight
 * (against four connections, in alternation on one signer: its main thread's CPU per signature a fifth lower, the
 * client's 5–30 % lower; docs/performance.md, "The signer through its socket, round two").
 *
 * Defends: a hung or crashed signer cannot hang the caller (per-request timeout; pending requests fail
 * with `hsm_unavailable` when the connection drops); replies are validated against the method's result
 * schema, so a confused signer cannot hand the front a malformed signature.
 * Does not defend: retries. A failed sign is not retried here; the caller decides, inside its own
 * transaction, what a failure means.
 *
 * Per request, on a connection that is open: one frame encoded and written in the caller's turn, no timer of its
 * own (a connection's requests share one timeout, so their deadlines fall in the order they were sent, and one
 * timer follows the oldest), and an id that is the connection's count of requests (unique on it for the process's
 * life: a reply can only answer the request it names).
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { BaseError } from '../../base/base-error.js';
import { writeCoalesced } from './coalesced-write.js';
import { encodeFrame, FrameDecoder } from './frame-codec.js';
import {
  SIGNER_METHODS,
  signerReplySchema,
  type SignerErrorCode,
  type SignerErrorDetails,
  type SignerMethod,
  type SignerParams,
  type SignerResult,
} from './signer-protocol.js';

/**
 * A signer's error reply (or an unreachable signer) as the client sees it, in the base error shape
 * (base/base-error.ts): `code` from the reply, `details` the refusal's rule or limit as fields (`{}` when the
 * signer sent none; branch on these, never on the message).
 */
export class SignerError extends BaseError<SignerErrorCode, SignerErrorDetails> {
  override readonly name = 'SignerError';
  constructor(code: SignerErrorCode, message: string, details?: SignerErrorDetails, options: { cause?: unknown } = {}) {
    super(code, { message, details, cause: options.cause });
  }
}

export interface SignerClientOptions {
  socketPath: string;
  /** Per-request timeout in milliseconds (default 10 s). */
  timeoutMs?: number;
  /** Number of parallel connections (default 1: see the header). */
  connections?: number;
}

interface Pending {
  method: SignerMethod;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** `performance.now()` past which the request fails with `hsm_unavailable`. */
  deadline: number;
}

class SignerConnection {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  /** Requests sent and not answered, oldest first (a Map keeps insertion order): so are their deadlines. */
  readonly pending = new Map<string, Pending>();
  /** Requests sent on this connection object, over every socket it opened: the next request's id. */
  private sent = 0;
  /** Follows the oldest pending request's deadline (it may fire early, and then follows the next); none while nothing is pending. */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socketPath: string,
    private readonly timeoutMs: number,
  ) {}

  private connect(): Promise<net.Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    this.connecting = new Promise<net.Socket>((resolve, reject) => {
      const socket = net.createConnection(this.socketPath);
      const decoder = new FrameDecoder();
      socket.once('connect', () => {
        this.socket = socket;
        this.connecting = null;
        resolve(socket);
      });
      socket.on('data', (chunk) => {
        for (const event of decoder.push(chunk)) {
          if (event.kind !== 'frame') {
            socket.destroy(new Error('signer sent a malformed frame'));
            return;
          }
          this.onFrame(event.payload);
        }
      });
      socket.on('error', (err) => {
        if (this.connecting) {
          this.connecting = null;
          reject(new SignerError('hsm_unavailable', `signer socket unreachable: ${err.message}`));
        }
      });
      socket.on('close', () => {
        this.socket = null;
        this.failAll(new SignerError('hsm_unavailable', 'signer connection closed'));
      });
    });
    return this.connecting;
  }

  private onFrame(payload: Buffer): void {
    let parsed;
    try {
      parsed = signerReplySchema.safeParse(JSON.parse(payload.toString('utf8')));
    } catch {
      return;
    }
    if (!parsed.success || parsed.data.id === null) return;
    const entry = this.pending.get(parsed.data.id);
    if (!entry) return;
    this.pending.delete(parsed.data.id);
    if (this.pending.size === 0) this.disarm();
    if (parsed.data.ok) {
      const result = SIGNER_METHODS[entry.method].result.safeParse(parsed.data.result);
      if (result.success) entry.resolve(result.data);
      else entry.reject(new SignerError('internal_error', `signer reply for ${entry.method} failed validation`));
    } else {
      entry.reject(new SignerError(parsed.data.error.code, parsed.data.error.message, parsed.data.error.details));
    }
  }

  private failAll(error: Error): void {
    for (const [id, entry] of this.pending) {
      entry.reject(error);
      this.pending.delete(id);
    }
    this.disarm();
  }

  /** Fails every request whose deadline has passed, then follows the oldest one left. */
  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [id, entry] of this.pending) {
      if (entry.deadline > now) {
        this.timer = setTimeout(() => this.expire(), Math.ceil(entry.deadline - now));
        return;
      }
      this.pending.delete(id);
      entry.reject(
        new SignerError('hsm_unavailable', `signer did not answer ${entry.method} within ${this.timeoutMs} ms`),
      );
    }
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  send(method: SignerMethod, params: unknown): Promise<unknown> {
    const socket = this.socket;
    if (socket && !socket.destroyed) return this.sendOn(socket, method, params);
    return this.connect().then((connected) => this.sendOn(connected, method, params));
  }

  private sendOn(socket: net.Socket, method: SignerMethod, params: unknown): Promise<unknown> {
    const id = (this.sent++).toString(36);
    const frame = encodeFrame({ v: 1, id, method, params });
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject, deadline: performance.now() + this.timeoutMs });
      this.timer ??= setTimeout(() => this.expire(), this.timeoutMs);
      writeCoalesced(socket, frame);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }
}

export class SignerClient {
  private readonly connections: SignerConnection[];
  private next = 0;
  private readonly timeoutMs: number;

  constructor(options: SignerClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.connections = Array.from(
      { length: options.connections ?? 1 },
      () => new SignerConnection(options.socketPath, this.timeoutMs),
    );
  }

  async call<M extends SignerMethod>(method: M, params: SignerParams<M>): Promise<SignerResult<M>> {
    const connection = this.connections[this.next++ % this.connections.length]!;
    return (await connection.send(method, params)) as SignerResult<M>;
  }

  health() {
    return this.call('health', {});
  }
  createAccountKey() {
    return this.call('create_account_key', {});
  }
  createWalletKey(params: SignerParams<'create_wallet_key'>) {
    return this.call('create_wallet_key', params);
  }
  signTransferAuthorization(params: SignerParams<'sign_transfer_authorization'>) {
    return this.call('sign_transfer_authorization', params);
  }
  signPermit2WitnessTransfer(params: SignerParams<'sign_permit2_witness_transfer'>) {
    return this.call('sign_permit2_witness_transfer', params);
  }
  signEip2612Permit(params: SignerParams<'sign_eip2612_permit'>) {
    return this.call('sign_eip2612_permit', params);
  }
  signSolanaTransaction(params: SignerParams<'sign_solana_transaction'>) {
    return this.call('sign_solana_transaction', params);
  }
  destroyWalletKey(params: SignerParams<'destroy_wallet_key'>) {
    return this.call('destroy_wallet_key', params);
  }

  close(): void {
    for (const connection of this.connections) connection.close();
  }
}

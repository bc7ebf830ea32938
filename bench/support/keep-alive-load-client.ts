/**
 * A lean HTTP/1.1 load client for the benchmarks: a fixed set of keep-alive TCP connections, one request in
 * flight per connection, requests queued (FIFO) when all are busy. Each request is written as one buffer
 * (head + body) and the response is read by its Content-Length only.
 *
 * Why: the load generator shares the two cores with the service it measures; node:http spends about twice
 * the CPU per request on header objects, events and parsers that a fixed request does not need.
 * Limits: HTTP/1.1 responses with a Content-Length only (chunked or connection-close bodies are reported as
 * failures, not read); no TLS, no redirects. A failed or closed connection fails its request and is reopened.
 * A connection idle for `idleReopenMs` (default 4 s) is closed and opened again before its next request, as
 * undici does: node:http servers close keep-alive connections idle for 5 s, and a request written as the
 * server closes would fail (a failure of the client, not of the service).
 */
import net from 'node:net';

export interface KeepAliveLoadClientOptions {
  host: string;
  port: number;
  connections: number;
  /** Reopen a connection idle for this long before its next request (default 4,000 ms). */
  idleReopenMs?: number;
  /** Told of every answer other than 200, with the start of its body (the bench names the error codes). */
  onFailedAnswer?: FailedAnswerListener;
}

interface Waiter {
  head: string;
  body: Buffer;
  resolve(status: number): void;
}

/** An answer other than 200: its status and its body's first 300 characters (what the bench reports once per status). */
export type FailedAnswerListener = (status: number, body: string) => void;

class Connection {
  private socket: net.Socket | undefined;
  private buffered: Buffer = Buffer.alloc(0);
  private current: Waiter | undefined;
  private idleSince = 0;

  constructor(
    private readonly options: KeepAliveLoadClientOptions,
    private readonly onIdle: (c: Connection) => void,
  ) {}

  send(waiter: Waiter): void {
    this.current = waiter;
    if (this.socket && performance.now() - this.idleSince > (this.options.idleReopenMs ?? 4_000)) this.close();
    const socket = this.open();
    socket.write(Buffer.concat([Buffer.from(waiter.head, 'latin1'), waiter.body]));
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private open(): net.Socket {
    if (this.socket) return this.socket;
    const socket = net.connect({ host: this.options.host, port: this.options.port, noDelay: true });
    // Events of a socket this connection already left behind (closed after a failure) are ignored.
    socket.on('data', (chunk: Buffer) => {
      if (this.socket === socket) this.onData(chunk);
    });
    const fail = () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.buffered = Buffer.alloc(0);
      this.finish(0);
    };
    socket.on('error', fail);
    socket.on('close', fail);
    this.socket = socket;
    return socket;
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.buffered.toString('latin1', 0, headEnd);
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) {
      // Not a response this client can delimit: fail it and start over on a new connection.
      this.close();
      this.buffered = Buffer.alloc(0);
      this.finish(0);
      return;
    }
    const total = headEnd + 4 + Number(length[1]);
    if (this.buffered.length < total) return;
    const status = Number(head.slice(9, 12));
    if (status !== 200 && this.options.onFailedAnswer)
      this.options.onFailedAnswer(status, this.buffered.toString('utf8', headEnd + 4, Math.min(total, headEnd + 304)));
    this.buffered = this.buffered.subarray(total);
    this.finish(status);
  }

  private finish(status: number): void {
    const waiter = this.current;
    if (!waiter) return;
    this.current = undefined;
    this.idleSince = performance.now();
    waiter.resolve(status);
    this.onIdle(this);
  }
}

export class KeepAliveLoadClient {
  private readonly idle: Connection[] = [];
  private readonly all: Connection[] = [];
  private readonly queue: Waiter[] = [];

  constructor(private readonly options: KeepAliveLoadClientOptions) {
    for (let i = 0; i < options.connections; i++) {
      const c = new Connection(options, (conn) => this.onIdle(conn));
      this.all.push(c);
      this.idle.push(c);
    }
  }

  /** Sends one request; resolves with the response status (0 when the connection failed). */
  request(method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<number> {
    const lines = [
      `${method} ${path} HTTP/1.1`,
      `host: ${this.options.host}:${this.options.port}`,
      'connection: keep-alive',
      `content-length: ${body.length}`,
    ];
    for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
    const head = `${lines.join('\r\n')}\r\n\r\n`;
    return new Promise((resolve) => {
      const waiter: Waiter = { head, body, resolve };
      const c = this.idle.pop();
      if (c) c.send(waiter);
      else this.queue.push(waiter);
    });
  }

  close(): void {
    for (const c of this.all) c.close();
  }

  private onIdle(c: Connection): void {
    const next = this.queue.shift();
    if (next) c.send(next);
    else this.idle.push(c);
  }
}

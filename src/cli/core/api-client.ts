/**
 * The CLI's HTTP client for the Treasury platform: bearer auth, JSON in and out, a time-out, and every
 * non-2xx turned into a CliError carrying the server's `error_code`, its `user_message` unchanged and its
 * `recovery` block. A 401 goes to `onUnauthorized` once (the session refresh of docs/cli.md, "Sessions") when given.
 * With `reply` (a response schema of src/shared/api-responses/), a 2xx body of another shape is an
 * `invalid_reply` naming the first field at fault; the body is returned as the server sent it (keys the
 * schema does not know are kept, so `--json` output is the API's).
 *
 * It speaks HTTP through node:http (node:https for an https URL), not the global fetch: a process's first
 * fetch loads Node's bundled undici, about 150 ms of CPU, which was most of `xx whoami`'s start-up
 * (docs/cli.md, "Start-up"). Both are taken with process.getBuiltinModule, not `import`: on Node 24 the
 * ESM view of node:http reads every export, and one of them loads undici too. Redirects are not followed
 * (a 3xx is an error, as before). Kept-alive connections are reused only while fresh (./api-connections.ts): one
 * left idle while the CLI computed may have been closed by the server.
 */
import type { z } from 'zod';
import { connectionFor } from './api-connections.js';
import { CliError } from './cli-error.js';

interface RawReply {
  status: number;
  text: string;
}

/** One HTTP exchange: the status and the body as text; rejects on a network error or after `timeoutMs`. */
function send(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<RawReply> {
  const transport = process.getBuiltinModule(url.protocol === 'https:' ? 'node:https' : 'node:http');
  const headers =
    init.body === undefined ? init.headers : { ...init.headers, 'content-length': `${Buffer.byteLength(init.body)}` };
  const connection = connectionFor(url);
  return new Promise<RawReply>((resolve, reject) => {
    const req = transport.request(
      url,
      { method: init.method, headers, agent: connection.agent, signal: AbortSignal.timeout(init.timeoutMs) },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('error', reject);
        res.on('end', () => {
          connection.ended();
          resolve({ status: res.statusCode ?? 0, text });
        });
        res.on('close', () => res.complete || reject(new Error('the connection closed before the reply ended')));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

export interface RequestOptions {
  body?: unknown;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
  /** Return the body as text (CSV export). */
  raw?: true;
}

/** A request whose 2xx body must match `reply`. */
export interface ParsedRequestOptions<S extends z.ZodType> extends Omit<RequestOptions, 'raw'> {
  reply: S;
}

export interface ApiClientOptions {
  baseUrl: string;
  token: string | undefined;
  timeoutMs?: number;
  /** Called on a 401; a new token retries the call once, undefined gives up with the 401. */
  onUnauthorized?: (error: CliError) => Promise<string | undefined>;
}

export class ApiClient {
  readonly baseUrl: string;
  private token: string | undefined;

  constructor(private readonly options: ApiClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
  }

  request<S extends z.ZodType>(method: string, path: string, options: ParsedRequestOptions<S>): Promise<z.output<S>>;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<T>;
  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions & { reply?: z.ZodType } = {},
  ): Promise<T> {
    try {
      return await this.once<T>(method, path, options);
    } catch (err) {
      if (!(err instanceof CliError) || err.status !== 401 || !this.options.onUnauthorized) throw err;
      const next = await this.options.onUnauthorized(err);
      if (!next) throw err;
      this.token = next;
      return this.once<T>(method, path, options);
    }
  }

  private async once<T>(method: string, path: string, options: RequestOptions & { reply?: z.ZodType }): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = {
      accept: options.raw ? '*/*' : 'application/json',
      'user-agent': 'xx-cli',
      ...options.headers,
    };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let res: RawReply;
    try {
      res = await send(url, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        timeoutMs: this.options.timeoutMs ?? 30_000,
      });
    } catch (err) {
      const cause = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new CliError({ code: 'network_error', userMessage: `Could not reach ${this.baseUrl}: ${cause}` });
    }
    const text = res.text;
    if (res.status >= 200 && res.status < 300) {
      if (options.raw) return text as T;
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : {};
      } catch {
        throw new CliError({
          code: 'invalid_reply',
          userMessage: `${method} ${path} answered something that is not JSON.`,
        });
      }
      if (options.reply) checkReply(options.reply, body, `${method} ${path}`);
      return body as T;
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON
    }
    const code = typeof body.error_code === 'string' ? body.error_code : `http_${res.status}`;
    const userMessage =
      typeof body.user_message === 'string' ? body.user_message : `${method} ${path} failed with HTTP ${res.status}.`;
    const recovery =
      body.recovery && typeof body.recovery === 'object' ? (body.recovery as Record<string, unknown>) : undefined;
    const { error_code: _c, user_message: _m, recovery: _r, request_id: _q, ...details } = body;
    throw new CliError({
      code,
      userMessage,
      status: res.status,
      recovery,
      details: Object.keys(details).length > 0 ? details : undefined,
    });
  }
}

/** Throws `invalid_reply` unless `body` matches `schema`, naming the first field at fault (never its value). */
export function checkReply(schema: z.ZodType, body: unknown, what: string): void {
  const parsed = schema.safeParse(body);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(the body)';
  throw new CliError({
    code: 'invalid_reply',
    userMessage: `${what} answered an unexpected shape (${field}); is the server a Treasury of this version?`,
    details: { field },
  });
}

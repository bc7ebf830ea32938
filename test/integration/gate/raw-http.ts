/**
 * A raw HTTP/1.1 exchange over a TCP socket, for the gate's path suites: fetch and node:http normalise or refuse
 * the request targets these tests need to send as written (`/a/..\b`, `%2e%2e`, controls, non-ASCII), and
 * node:http will not send a chunked body on every method. One request per connection (`Connection: close`); the
 * answer is read to the end and parsed (status, lower-cased headers, body, chunked bodies decoded).
 */
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawRequest {
  method?: string;
  target: string;
  headers?: Record<string, string>;
  /** A body sent with its Content-Length, or chunked (`chunked: true`). */
  body?: string;
  chunked?: boolean;
}

function dechunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol === -1) break;
    const size = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(size > 0)) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function parseAnswer(raw: Buffer): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: '' };
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = raw.subarray(end + 4);
  const body = headers['transfer-encoding'] === 'chunked' ? dechunk(rest) : rest;
  return { status: Number(statusLine!.split(' ')[1] ?? 0), headers, body: body.toString('utf8') };
}

function requestBytes(host: string, r: RawRequest): Buffer {
  const head = [`${r.method ?? 'GET'} ${r.target} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
  for (const [name, value] of Object.entries(r.headers ?? {})) head.push(`${name}: ${value}`);
  let body = '';
  if (r.body !== undefined && r.chunked) {
    head.push('Transfer-Encoding: chunked');
    body = `${Buffer.byteLength(r.body).toString(16)}\r\n${r.body}\r\n0\r\n\r\n`;
  } else if (r.body !== undefined) {
    head.push(`Content-Length: ${Buffer.byteLength(r.body)}`);
    body = r.body;
  }
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), Buffer.from(body, 'utf8')]);
}

/** Sends `r` to the server at `baseUrl` (http://host:port) and reads its whole answer. */
export function rawExchange(baseUrl: string, r: RawRequest): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  const host = r.headers?.Host ?? url.host;
  const headers = { ...r.headers };
  delete headers.Host;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('raw exchange timed out')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A reset after the answer (the gate closing on a 413 while the body is still coming) still has the answer.
    socket.on('error', (err) => (chunks.length ? resolve(parseAnswer(Buffer.concat(chunks))) : reject(err)));
    socket.on('end', () => resolve(parseAnswer(Buffer.concat(chunks))));
    socket.write(requestBytes(host, { ...r, headers }));
  });
}

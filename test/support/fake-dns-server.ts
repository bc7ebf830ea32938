/**
 * A nameserver on a loopback UDP port for tests of the outbound path's DNS resolution: answers A (and an empty
 * AAAA) for the names it is given, and never answers any other name (a zone whose nameserver drops queries).
 * Counts the queries it received by name. Only the parts of a DNS message a stub resolver's query needs.
 */
import dgram from 'node:dgram';
import type { AddressInfo } from 'node:net';

export interface FakeDnsServer {
  /** `127.0.0.1:port`, for Resolver.setServers. */
  server: string;
  /** Queries received, by name (each of A and AAAA counts). */
  queries: Map<string, number>;
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

function readName(msg: Buffer, at: number): { name: string; end: number } {
  const labels: string[] = [];
  let i = at;
  while (i < msg.length && msg[i] !== 0) {
    const len = msg[i]!;
    labels.push(msg.subarray(i + 1, i + 1 + len).toString('latin1'));
    i += 1 + len;
  }
  return { name: labels.join('.').toLowerCase(), end: i + 1 };
}

function answer(query: Buffer, questionEnd: number, type: number, ipv4: string | undefined): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  header.writeUInt16BE(0x8180, 2); // a response, recursion desired and available, no error
  header.writeUInt16BE(1, 4);
  const records = type === TYPE_A && ipv4 ? 1 : 0;
  header.writeUInt16BE(records, 6);
  const question = query.subarray(12, questionEnd + 4);
  if (records === 0) return Buffer.concat([header, question]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
  record.writeUInt16BE(TYPE_A, 2);
  record.writeUInt16BE(1, 4); // IN
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(4, 10);
  ipv4!.split('.').forEach((octet, k) => record.writeUInt8(Number(octet), 12 + k));
  return Buffer.concat([header, question, record]);
}

/** Starts a nameserver answering `names` (name → IPv4 address); every other name is never answered. */
export async function startFakeDnsServer(names: Record<string, string>): Promise<FakeDnsServer> {
  const socket = dgram.createSocket('udp4');
  const queries = new Map<string, number>();
  socket.on('message', (msg, peer) => {
    if (msg.length < 17) return;
    const { name, end } = readName(msg, 12);
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const type = msg.readUInt16BE(end);
    if (!Object.hasOwn(names, name) || (type !== TYPE_A && type !== TYPE_AAAA)) return;
    socket.send(answer(msg, end, type, names[name]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    queries,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}

/**
 * Where `xx mcp --http <host:port>` listens, and which Host headers it answers. Loopback (the shared rule,
 * src/shared/loopback-host.ts: 127.0.0.0/8, ::1, IPv4-mapped 127.0.0.0/8, localhost) unless `--allow-remote` says otherwise: the endpoint spends with the agent's PAT for whoever holds
 * its bearer (./mcp-http-bearer.ts), which plain HTTP carries in clear off loopback, so a non-loopback bind is
 * refused without that explicit flag.
 *
 * Defends: DNS rebinding (a web page whose host name resolves to 127.0.0.1 driving the local server) — only
 * requests whose Host names the address itself are answered (./mcp-http-server.ts); an accidental 0.0.0.0.
 * Does not: encrypt the traffic on a non-loopback bind (put it behind something that does).
 */
import { isLoopbackHost } from '../../../shared/loopback-host.js';
import { CliError } from '../../core/cli-error.js';

export interface ListenAddress {
  host: string;
  port: number;
  loopback: boolean;
}

function bad(message: string): CliError {
  return new CliError({
    code: 'invalid_argument',
    userMessage: `--http: ${message}`,
    exitCode: 2,
    details: { flag: '--http' },
  });
}

/** `127.0.0.1:8765`, `localhost:0`, `[::1]:8765`; port 0 picks a free one. */
export function parseListenAddress(raw: string, allowRemote: boolean): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([A-Za-z0-9.-]+)):([0-9]{1,5})$/.exec(raw.trim());
  if (!m) throw bad(`expected host:port such as 127.0.0.1:8765, got "${raw}"`);
  const host = (m[1] ?? m[2]!).toLowerCase();
  const port = Number(m[3]);
  if (port > 65535) throw bad('the port is at most 65535');
  const loopback = isLoopbackHost(host);
  if (!loopback && !allowRemote)
    throw new CliError({
      code: 'non_loopback_refused',
      userMessage: `--http ${raw} is not a loopback address; whoever sees its bearer on the wire (plain HTTP) spends with this agent's PAT. Use 127.0.0.1, or add --allow-remote if you mean it.`,
      exitCode: 2,
      details: { flag: '--http' },
    });
  return { host, port, loopback };
}

/** The Host header values that name this server (DNS-rebinding check), for the port actually bound. */
export function allowedHostHeaders(address: ListenAddress, boundPort: number): Set<string> {
  const names = address.loopback
    ? ['127.0.0.1', 'localhost', '[::1]']
    : [address.host.includes(':') ? `[${address.host}]` : address.host];
  if (address.loopback && address.host.startsWith('127.') && address.host !== '127.0.0.1') names.push(address.host);
  return new Set(names.map((n) => `${n}:${boundPort}`));
}

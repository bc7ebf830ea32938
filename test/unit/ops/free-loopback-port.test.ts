/**
 * The port handed to a process about to start (ops/net/free-loopback-port.ts): free when drawn, and on Linux outside
 * the kernel's ephemeral range, from which every outgoing connection's local port is taken (so that a busy machine's
 * connections cannot take it before the process listens).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { freeLoopbackPort } from '../../../ops/net/free-loopback-port.js';

const listen = (port: number) =>
  new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

describe('freeLoopbackPort', () => {
  it('gives ports that can be listened on, below the ephemeral range where the kernel names it', async () => {
    const range = fs.existsSync('/proc/sys/net/ipv4/ip_local_port_range')
      ? Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
      : undefined;
    for (let i = 0; i < 20; i++) {
      const port = await freeLoopbackPort();
      assert.ok(Number.isInteger(port) && port >= 1024 && port <= 65535, `port ${port}`);
      if (range !== undefined && range > 10_000) assert.ok(port < range, `port ${port} is in the ephemeral range`);
      const server = await listen(port);
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/**
 * A TCP port that was free a moment ago on 127.0.0.1: the kernel picks one for a listener that is closed at
 * once. For the sandbox's children and the test harnesses, which pass the port to a process they start.
 * It does not reserve the port: another process may take it before the caller listens on it.
 */
import net from 'node:net';

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

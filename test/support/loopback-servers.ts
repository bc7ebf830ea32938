/**
 * HTTP servers a test starts on 127.0.0.1 (any free port) and closes together: `listen(handler)` answers
 * the base URL; `closeAll()` drops keep-alive connections and waits for every server to close.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export class LoopbackServers {
  private readonly servers: http.Server[] = [];

  async listen(handler: http.RequestListener): Promise<string> {
    const server = http.createServer(handler);
    this.servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async closeAll(): Promise<void> {
    for (const server of this.servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}

/** A handler that serves `doc()` (read on each request) as JSON at /openapi.json and 404 elsewhere: a seller's OpenAPI document. */
export function openApiDocHandler(doc: () => unknown): http.RequestListener {
  return (req, res) => {
    if (req.url === '/openapi.json')
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc()));
    else res.writeHead(404).end();
  };
}

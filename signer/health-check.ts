/**
 * `node dist/signer/health-check.js`: the signer image's HEALTHCHECK. Asks the signer listening on
 * TREASURY_SIGNER_SOCKET for `health` over its own protocol (signer/protocol/) and exits 0 when it answers ok
 * within TREASURY_SIGNER_HEALTH_TIMEOUT_MS (default 3,000), 1 otherwise with one line saying why.
 *
 * Defends against: a container reported healthy while its signer cannot answer (hung, socket gone, backend
 * down). Reads no PIN, opens no key, signs nothing. Does not check the signer's limits or the HSM's keys.
 */
import { SignerClient } from './protocol/signer-client.js';

async function main(): Promise<number> {
  const socketPath = process.env.TREASURY_SIGNER_SOCKET;
  if (!socketPath) {
    process.stderr.write('signer health check: TREASURY_SIGNER_SOCKET is not set\n');
    return 1;
  }
  const timeoutMs = Number(process.env.TREASURY_SIGNER_HEALTH_TIMEOUT_MS ?? 3000);
  const client = new SignerClient({
    socketPath,
    connections: 1,
    timeoutMs: Number.isFinite(timeoutMs) ? timeoutMs : 3000,
  });
  try {
    const health = await client.health();
    process.stdout.write(`signer healthy (backend ${health.backend}, protocol v${health.protocol_version})\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`signer unhealthy: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  } finally {
    client.close();
  }
}

process.exitCode = await main();

/**
 * CLI for the KMS emulator (a TEST DOUBLE: keys live in this process's memory):
 *
 *   node --import tsx ops/kms-emulator/main.ts [--port 4599] [--host 127.0.0.1] [--region us-east-1] [--any-signed]
 *
 * Prints one JSON line on stdout with the URL, region and the test credentials a client must sign with
 * (public constants, not secrets), then serves until SIGINT/SIGTERM. `--any-signed` accepts any
 * well-formed SigV4 signature instead of verifying it.
 */
import { parseArgs } from 'node:util';
import { startKmsEmulator } from './kms-emulator.js';

const { values } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    region: { type: 'string', default: 'us-east-1' },
    'any-signed': { type: 'boolean', default: false },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write(`--port must be an integer 0-65535, got ${values.port}\n`);
  process.exit(2);
}

const emulator = await startKmsEmulator({
  host: values.host,
  port,
  region: values.region,
  ...(values['any-signed'] ? { credentials: 'any-signed' as const } : {}),
});
process.stdout.write(
  `${JSON.stringify({ kms_emulator: emulator.url, test_double: true, region: emulator.region, account_id: emulator.accountId, control: `${emulator.url}/__emulator/health`, client_env: emulator.clientEnv() })}\n`,
);

// While a `refuse` fault has closed the listener nothing else holds the event loop: keep the process up until a signal.
const keepAlive = setInterval(() => undefined, 60_000);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    clearInterval(keepAlive);
    void emulator.close().then(() => process.exit(0));
  });
}

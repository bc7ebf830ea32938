/**
 * What `npm start` reads from its environment (docs/configuration.md, "npm start"): the data directory, the
 * API's address, the embedded PostgreSQL port, the sandbox's other ports and the signer's key backend. A port
 * outside 0–65535 or an unknown key backend stops the start with the variable's name.
 * Does not: check that a port is free (the process that binds it reports that), or reach beyond loopback.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const dataDir = path.resolve(process.env.TREASURY_DATA_DIR ?? path.join(ROOT, '.treasury'));
export const apiPort = Number(process.env.TREASURY_PORT ?? 8402);
export const apiHost = process.env.TREASURY_HOST ?? '127.0.0.1';
export const pgPort = Number(process.env.TREASURY_EMBEDDED_PG_PORT ?? 54329);

/** A sandbox port from the environment: unset → the default; 0 → any free port. */
export function sandboxPort(name: string, fallback: number): number | undefined {
  const raw = process.env[name];
  const port = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`${name} must be a port number (0 = any free port)`);
  return port === 0 ? undefined : port;
}

export type SandboxKeyBackend = 'pkcs11' | 'aws-kms';

/** The signer's key backend: SoftHSM (default) or AWS KMS on the emulator. */
export function sandboxKeyBackend(): SandboxKeyBackend {
  const raw = process.env.TREASURY_SANDBOX_KEY_BACKEND ?? 'pkcs11';
  if (raw !== 'pkcs11' && raw !== 'aws-kms') throw new Error('TREASURY_SANDBOX_KEY_BACKEND must be pkcs11 or aws-kms');
  return raw;
}

/** One line of the sandbox's own output. */
export function say(line: string): void {
  process.stdout.write(line + '\n');
}

/** A secret kept in the data directory (mode 0600): read when present, else made and written once. */
export function readOrCreateSecret(file: string, make: () => string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  const value = make();
  fs.writeFileSync(file, value + '\n', { mode: 0o600 });
  return value;
}

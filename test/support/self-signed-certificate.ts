/**
 * A throw-away TLS certificate for tests that serve HTTPS on loopback: a P-256 key and a self-signed certificate
 * valid for one day, made with the machine's `openssl` (tests skip when it is missing: `opensslAvailable`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export function opensslAvailable(): boolean {
  return spawnSync('openssl', ['version']).status === 0;
}

/** Writes `cert.pem` and `key.pem` into `dir` for `commonName`, valid for 127.0.0.1; returns their paths. */
export function makeSelfSignedCertificate(dir: string, commonName: string): { cert: string; key: string } {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'].concat([
      '-subj',
      `/CN=${commonName}`,
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { encoding: 'utf8' },
  );
  assert.equal(made.status, 0, made.stderr);
  return { cert, key };
}
